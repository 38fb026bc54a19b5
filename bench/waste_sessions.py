"""Waste in a recorded session, read from the raw trace alone (never from the supervisor).

A session wastes turns when one of these reaches ``MIN_TURNS`` (5) turns:

- **the same failure**: the same command (whitespace collapsed) with the same failing output
  (volatile text normalised: numbers, hex addresses, temporary paths, ids), counted over
  the whole session, whatever ran in between;
- **a no-effect rerun**: the same command (not a look at files) giving the same output as
  its previous run, with no other edit in between (an identical edit repeated with the same
  result counts too).

A failing output is a non-zero exit code where the trace has one, otherwise an output with
an error marker (a traceback, ``error:``, ``FAILED``, ``command not found`` …). These
definitions are deliberately simple and independent of the pack's detectors, so the pack
can be measured against them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MIN_TURNS = 5

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0xH"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "UUID"),
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "HEX"),
    (re.compile(r"/tmp/[^\s'\"]+"), "/tmp/P"),
    (re.compile(r"\d+(\.\d+)?"), "N"),
    (re.compile(r"\s+"), " "),
]
_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b\w*(Error|Exception)\b:|\berror:|\bERROR\b|\bFAILED\b|"
    r"command not found|No such file or directory|\bfatal:|\bfailed\b|Segmentation fault|"
    r"syntax error|cannot |can't |not found",
    re.IGNORECASE,
)
#: commands that only look at files or the tree
_LOOK = re.compile(
    r"^(cat|head|tail|less|more|ls|ll|tree|find|grep|rg|ag|wc|nl|file|stat|pwd|echo|which|type|"
    r"open|goto|scroll_up|scroll_down|search_file|search_dir|find_file|git (diff|status|log|show))\b"
    r"|^sed -n\b"
)
#: commands that change files
_EDIT = re.compile(
    r"^(edit|create|str_replace|insert|apply_patch|patch)\b|\bsed -i\b|\bperl -pi\b|\btee\b|"
    r"(^|[^<>2&])>{1,2}\s*[^\s&|]|<<\s*['\"]?\w+['\"]?|\.write\(|\bmv\b|\bcp\b|\brm\b|\btouch\b|\bgit (apply|checkout|stash)\b",
)


#: arguments that only say how a command runs (Agent-Zero's terminal, OpenHands' execute_bash)
_RUN_ARGS = {"code", "command", "runtime", "session", "reset", "is_input", "timeout"}


@dataclass(frozen=True)
class Waste:
    kind: str  # "same failure" or "no-effect rerun"
    command: str
    turns: tuple[int, ...]  # the turns that count

    @property
    def first(self) -> int:
        return self.turns[0]

    @property
    def last(self) -> int:
        return self.turns[-1]

    def met_by(self, event: dict) -> bool:
        """Whether a supervision event (``turn``, ``action``) answered this stretch: a steering
        inside it, or a pause before its end (a chat paused before the waste began stops it)."""
        return self.first <= event["turn"] <= self.last or (event["action"] == "pause" and event["turn"] <= self.last)


def normal_command(command: str) -> str:
    return " ".join(command.split())


def normal_output(output: str) -> str:
    for pattern, repl in _VOLATILE:
        output = pattern.sub(repl, output)
    return output.strip()


def command_of(turn: dict[str, Any]) -> str | None:
    if not turn.get("tool"):
        return None
    args = turn.get("args") or {}
    if isinstance(args, dict):
        text = args.get("code") or args.get("command")
        if text is None or set(args) - _RUN_ARGS:  # an editor's sub-command names no file: the whole call does
            text = " ".join(f"{k}={v}" for k, v in sorted(args.items()))
    else:
        text = str(args)
    return f"{turn['tool']}: {normal_command(str(text))}"


def failed(turn: dict[str, Any]) -> bool:
    code = turn.get("exit_code")
    if code is not None:
        return code != 0
    if turn.get("ok") is not None:
        return not turn["ok"]
    output = turn.get("output") or ""
    command = command_of(turn) or ""
    if is_look(command) or output.startswith("[File:"):  # a file shown may contain error words: only its first line says it failed
        output = output.strip().split("\n", 1)[0]
    return bool(_ERROR.search(output))


def _bare(command: str) -> str:
    return command.split(": ", 1)[-1].lstrip("( ").removeprefix("cd ").split("&&")[-1].strip()


def is_edit(command: str) -> bool:
    return bool(_EDIT.search(command.split(": ", 1)[-1]))


def is_look(command: str) -> bool:
    return bool(_LOOK.match(_bare(command))) and not is_edit(command)


def changes(turns: list[dict[str, Any]]) -> list[int]:
    """The turns whose edit went in (an edit command that did not fail): where the agent changed
    the code it would be judged on."""
    return [turn.get("turn", i + 1) for i, turn in enumerate(turns)
            if (command := command_of(turn)) is not None and is_edit(command) and not failed(turn)]


def waste_in(turns: list[dict[str, Any]], min_turns: int = MIN_TURNS) -> list[Waste]:
    """Every stretch of waste in one session's raw trace lines, by first turn."""
    failures: dict[tuple[str, str], list[int]] = {}
    reruns: dict[str, tuple[str, list[int]]] = {}  # command -> (last output, the run of no-effect reruns)
    found: list[Waste] = []

    def close(chains: dict[str, tuple[str, list[int]]]) -> None:
        found.extend(Waste("no-effect rerun", c, tuple(t)) for c, (_, t) in chains.items() if len(t) >= min_turns)

    for i, turn in enumerate(turns):
        number = turn.get("turn", i + 1)
        command = command_of(turn)
        if command is None:
            continue
        output = normal_output(turn.get("output") or "")
        if failed(turn):
            failures.setdefault((command, output), []).append(number)
        if is_look(command):
            continue
        last = reruns.get(command)
        if last and last[0] == output:
            last[1].append(number)
        else:
            if last:
                close({command: last})
            reruns[command] = (output, [number])
        if is_edit(command):  # an edit may change what every other run shows
            close({c: v for c, v in reruns.items() if c != command})
            reruns = {command: reruns[command]}
    close(reruns)
    found += [Waste("same failure", c, tuple(t)) for (c, _), t in failures.items() if len(t) >= min_turns]
    return sorted(found, key=lambda w: w.first)
