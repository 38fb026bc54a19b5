"""What every converter writes: a session's trace lines and its run's ``labels.json``.

A corpus is ``<source>/<run>/<session>.jsonl`` plus ``<run>/labels.json`` (the layout
``bench/real_sessions.py`` reads). The JSON settings (key order, ASCII escapes) are each
converter's own, so a rebuilt corpus is byte for byte the one it replaces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Required, TypedDict


class TraceLine(TypedDict, total=False):
    """One turn in the replay format (docs/replay.md), with the two fields only the bench reads:
    ``exit_code`` (the waste count; Agent-Zero gives the pack none) and ``thought`` (the
    model's text before its call, for the "struggling" count and for reading events)."""

    turn: Required[int]
    user: str
    tool: str
    args: dict[str, Any] | None
    output: str
    ok: bool
    response: str
    exit_code: int
    thought: str


def next_turn(lines: Sequence[Mapping[str, Any]], further: bool = False) -> int:
    """The turn of the next line: the last line's for a further call of its reply (calls sent
    together, before any result came back), else the one after it."""
    return (lines[-1]["turn"] if lines else 0) + (not further)


def turn_count(lines: Iterable[Mapping[str, Any]]) -> int:
    """The turns of a session's lines: a reply's calls are one."""
    return len({line["turn"] for line in lines})


def read_json(path: Path) -> Any:
    """The raw files are UTF-8 JSON whatever the platform's default encoding."""
    return json.loads(path.read_text(encoding="utf-8"))


def read_jsonl(path: Path) -> list[Any]:
    """One JSON value a line; blank lines skipped."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def text_of(content: Any) -> str:
    """A chat message's text: a string, or a list of parts (``{"text": ...}``) joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def write_session(path: Path, lines: Iterable[Mapping[str, Any]], *, sort_keys: bool = False, ascii_only: bool = False) -> None:
    """One JSON line per turn, UTF-8, ``\\n`` line ends."""
    text = "".join(json.dumps(line, ensure_ascii=ascii_only, sort_keys=sort_keys) + "\n" for line in lines)
    path.write_bytes(text.encode("utf-8"))


def write_labels(folder: Path, resolved: Mapping[str, bool | None]) -> None:
    """``labels.json``: each session's ``{"resolved": true|false|null}`` (null: the source has no evaluation)."""
    labels = {session: {"resolved": value} for session, value in resolved.items()}
    (folder / "labels.json").write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n", encoding="utf-8")
