"""What a unit learned in its task that other units may need, read off its tool outcomes.

Only two patterns, both plain in the outcomes and rarely wrong (a wrong learning sent to
other agents costs more than a missed one):

* ``command_fix``: a run failed for a reason of the environment (a command or module not
  found, an option not known), and a later run, with nothing edited in between, that shares
  most of its words succeeded: "`pytest -q` fails (pytest: command not found); `python -m
  pytest -q` works".
* ``moved_path``: a path was not there ("No such file or directory", "cannot access"), and a
  later call that worked named a path with the same file name somewhere else.

A third kind, ``lesson``, is what the internaliser wrote into the unit's knowledge store: the
LLM supervisors note each lesson they write (:func:`note_lesson`), and the unit publishes the
latest with the others (:func:`lessons_noted`).
"""

from __future__ import annotations

import hashlib
import re
from typing import Iterable, Protocol, Sequence

from org.contracts.learning import MAX_LEARNING_CHARS, MAX_LEARNINGS, Learning
from org.lazy_patterns import lazy_pattern

#: Errors that say the command itself was wrong for this environment, not the code it ran.
_ENVIRONMENT_ERROR = lazy_pattern(
    r"command not found|not recognized as|No module named|ModuleNotFoundError|unrecognized (?:arguments|option)|"
    r"unknown (?:option|flag|command)|invalid option|no such option|is not installed",
    re.IGNORECASE,
)
#: A path named missing by the error line.
_MISSING_PATH = lazy_pattern(
    r"(?:cannot access|can't open file|cannot open|No such file or directory:?)\s*['\"`]?([\w.@+/-]*/[\w.@+-]+|[\w@+-]+\.[\w]+)['\"`]?"
    r"|['\"`]?([\w.@+/-]*/[\w.@+-]+|[\w@+-]+\.[\w]+)['\"`]?:? No such file or directory",
)
_INLINE_CODE = lazy_pattern(r"\s-c\s+['\"]")
_CD_PREFIX = lazy_pattern(r"^(?:\s*cd\s+\S+\s*&&)+")
_PATH_TOKEN = lazy_pattern(r"[\w.@+-]*/[\w.@+/-]+|[\w@+-]+\.[A-Za-z]\w{0,5}")
#: A fix must come within this many calls of the failure, or it is not about the same thing.
FIX_WITHIN_CALLS = 4
_WORDS_SHARED = 0.5


class Outcome(Protocol):  # ToolOutcome, or OutcomeSignal from a report
    turn: int
    ok: bool
    kind: str
    command: str | None
    error_line: str | None


def learnings_from(outcomes: Sequence[Outcome], domain: str | None = None) -> list[Learning]:
    """The learnings in a task's outcomes (oldest first), newest last, at most MAX_LEARNINGS."""
    found: dict[str, Learning] = {}
    for index, failed in enumerate(outcomes):
        if failed.ok or not failed.error_line:
            continue
        learning = _command_fix(failed, outcomes[index + 1:index + 1 + FIX_WITHIN_CALLS], domain) \
            or _moved_path(failed, outcomes[index + 1:], domain)
        if learning is not None:
            found.setdefault(learning.digest, learning)
    return list(found.values())[-MAX_LEARNINGS:]


def _command_fix(failed: Outcome, after: Iterable[Outcome], domain: str | None) -> Learning | None:
    if failed.kind != "run" or not failed.command or not _ENVIRONMENT_ERROR.search(failed.error_line or ""):
        return None
    if _INLINE_CODE.search(failed.command):
        return None  # inline code: the next run with other code does another job
    for later in after:
        if later.kind == "edit":
            return None  # the code changed: whatever worked next is not a different command for the same job
        if later.kind != "run" or not later.command or later.command == failed.command or _INLINE_CODE.search(later.command):
            continue
        if later.ok and same_job(failed.command, later.command):
            text = f"`{_short(failed.command)}` fails ({_short(failed.error_line or '', 90)}); `{_short(later.command)}` works"
            return _learning("command_fix", text, (failed.command, later.command), later.turn, domain,
                             programs=[program_of(failed.command)[:100]])
    return None


def _moved_path(failed: Outcome, after: Iterable[Outcome], domain: str | None) -> Learning | None:
    match = _MISSING_PATH.search(failed.error_line or "")
    if match is None:
        return None
    missing = (match.group(1) or match.group(2)).rstrip(".")
    name = missing.rsplit("/", 1)[-1]
    if "." not in name.strip("."):
        return None  # a folder or a program: "found elsewhere" would be a guess
    for later in after:
        if not later.ok or not later.command:
            continue
        for token in _PATH_TOKEN.findall(later.command):
            token = token.rstrip(".,;:")
            if token != missing and token.rsplit("/", 1)[-1] == name and "/" in token:
                text = f"`{_short(missing)}` does not exist; the file is at `{_short(token)}`"
                return _learning("moved_path", text, (missing, token), later.turn, domain, files=[missing[:200], token[:200]])
    return None


#: ``agent.data`` (not saved with the chat): the lessons the internaliser wrote in this chat, newest last.
LESSONS_KEY = "_org_lessons_written"
LESSONS_KEPT = 3


def note_lesson(data: dict, path: str, title: str, rule: str | None, domains: Sequence[str]) -> None:
    """Remember a lesson the internaliser wrote (``path`` in the knowledge store), to publish."""
    text = f"lesson {_short(title, 100)}" + (f": {_short(rule, 180)}" if rule else "")
    learning = _learning("lesson", text, (path, title, rule or ""), None, domains[0] if domains else None, files=[])
    kept = [item for item in data.get(LESSONS_KEY) or [] if isinstance(item, Learning) and item.digest != learning.digest]
    data[LESSONS_KEY] = [*kept, learning][-LESSONS_KEPT:]


def lessons_noted(data: dict) -> list[Learning]:
    return [item for item in data.get(LESSONS_KEY) or [] if isinstance(item, Learning)]


def _learning(kind: str, text: str, substance: tuple[str, ...], turn: int | None, domain: str | None,
              files: list[str] | None = None, programs: list[str] | None = None) -> Learning:
    digest = hashlib.sha256("\x00".join((kind, *substance)).encode("utf-8", "replace")).hexdigest()[:16]
    return Learning(kind=kind, text=text[:MAX_LEARNING_CHARS], digest=digest, turn=None if turn is None else max(0, turn),
                    domain=domain[:200] if domain else None, files=files or [], programs=programs or [])


def same_job(command: str, other: str) -> bool:
    """``other`` does the job of ``command`` another way: it shares at least half its words
    (`pytest tests/x.py` for `python -m pytest tests/x.py`)."""
    words = _words(command)
    return len(words & _words(other)) >= _WORDS_SHARED * len(words)


def _words(command: str) -> set[str]:
    """The words of a command after any leading ``cd DIR &&``, which says where, not what."""
    return set(_CD_PREFIX.sub("", command).split())


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def program_of(command: str) -> str:
    """The program a command runs (after any ``cd DIR &&``), without its folder."""
    return (_CD_PREFIX.sub("", command).split() or [""])[0].rsplit("/", 1)[-1]


def path_tokens(command: str | None) -> list[str]:
    """The paths a command names (for the files a unit works on)."""
    return [t.rstrip(".,;:") for t in _PATH_TOKEN.findall(command or "")]
