"""Wording findings as steering, from templates a user can override without code."""

from __future__ import annotations

import os
import string
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import AbstractSet, Any, Mapping

from org.contracts import Finding
from org.contracts.steering import ADVICE, OUTSIDE_THE_CODE, PLACEHOLDERS, REPEATED, SENTENCE_END, TAG, TIMED_OUT, base_key, check_template, count_sentences  # noqa: F401 (re-exported)
from org.kernel.classify import advice_kind
from org.kernel.copies import path_tail
from org.kernel.files import read_capped
from org.kernel.loading import load_yaml
from org.kernel.log import warn_once
from org.kernel.values import is_int
from org.lazy_patterns import lazy_pattern
from org.supervisor.escalation import times_in_words

MAX_OVERRIDES_BYTES = 256_000


@cache
def _load_defaults() -> Mapping[str, str]:
    """The pack's own texts, read once per process."""
    text = resources.files("org.supervisor").joinpath("steering.yaml").read_text(encoding="utf-8")
    data = load_yaml(text)
    for key, value in data.items():
        problem = check_template(key, value)
        if problem:  # a broken default is a bug in the pack, not a user error
            raise ValueError(f"org/supervisor/steering.yaml: {key}: {problem}")
    return MappingProxyType({k: " ".join(v.split()) for k, v in data.items()})


def _shortened(text: str, limit: int) -> str:
    """The text cut to ``limit`` characters, with an ellipsis when it was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _clean(value: Any, limit: int = 100) -> str:
    """One short clause: no line breaks, no sentence breaks, bounded length."""
    text = " ".join(str(value).split())
    match = SENTENCE_END.search(text)
    if match and match.start():  # (a line opening with "? ", go's package without tests, is not cut to nothing)
        text = text[: match.start()]
    return _shortened(text.rstrip(" .!?;:,"), limit)


def _doing(evidence: dict[str, Any]) -> str:
    if evidence.get("step"):
        return f" on step '{_clean(evidence['step'], 60)}'"
    if evidence.get("plan"):
        return f" on plan '{_clean(evidence['plan'], 60)}'"
    if evidence.get("domain"):
        return f" in '{_clean(evidence['domain'], 40)}' work"
    return ""


def _why(evidence: dict[str, Any]) -> str:
    """What brought a PACE level, in brackets: the failures in a row, or the turns without
    progress when the failures are the smaller part of them (two failures after 19 turns
    without progress are not the cause)."""
    failed, stuck = evidence.get("failed"), evidence.get("stuck")
    failed = failed if isinstance(failed, int) else 0
    stuck = stuck if isinstance(stuck, int) else 0
    latest = _clean(evidence["latest"]) if evidence.get("latest") else ""
    if failed >= 2 and 2 * failed >= stuck:
        return f" (the last {failed} calls failed" + (f"; the latest: {latest})" if latest else ")")
    if stuck > 0:
        return f" ({stuck} turns without progress" + (f"; the latest failure: {latest})" if latest else ")")
    return ""


#: a stall names the looks in it that found nothing from this many on: a hunt where nothing is
FOUND_NOTHING_NAMED = 3


def _repeated(evidence: dict[str, Any]) -> str:
    """What a stall's turns went on, in brackets: "(9 looks that found nothing; you ran `open a.py`
    7 times and `ls` twice)", and the other calls that repeat earlier ones, from 3 of them on (a
    round of reads longer than the stall: "(14 calls that repeat earlier ones, with the same
    results)"; "…; 5 more calls that repeat…" after the calls named)."""
    parts = []
    empty = evidence.get("found_nothing")
    if is_int(empty) and empty >= FOUND_NOTHING_NAMED:
        parts.append(f"{empty} looks that found nothing")
    quoted: dict[str, Any] = {}
    for what, times in evidence.get("repeated") or ():
        # calls that read the same once shortened are named once, with their counts together
        shown = _quoted(str(what), 72)  # room for a file tool's name with its lines
        earlier = quoted.get(shown)
        quoted[shown] = times if earlier is None else (earlier + times if is_int(earlier) and is_int(times) else earlier)
    calls = [f"{shown} {times_in_words(times)}" for shown, times in quoted.items()]
    if calls:
        parts.append(f"you ran {' and '.join(calls)}")
    again = evidence.get("made_before")
    if is_int(again) and again >= FOUND_NOTHING_NAMED:
        parts.append(f"{again}{' more' if calls else ''} calls that repeat earlier ones, with the same results")
    return f" ({'; '.join(parts)})" if parts else ""


def _round(evidence: dict[str, Any]) -> str:
    """The calls of one round of a cycle, each shortened inside its quotes: "`a`, `b` and `c`"."""
    round_ = evidence.get("round")
    calls = [_quoted(str(c), 40) for c in (round_ if isinstance(round_, list) else ()) if c]
    return ", ".join(calls[:-1]) + f" and {calls[-1]}" if len(calls) > 1 else "".join(calls)


#: a sentence end inside a quoted call: a mark after a word, then a space and a capital (a mark
#: just before the closing backtick ends no sentence, and is the call's own: `cd..`; nor do a
#: command's own marks: `cmake -S . -B build`, `go list ./... | grep`)
_SENTENCE_END_INSIDE = lazy_pattern(r"(?<=\w)[.!?]\s+(?=[A-Z])")


def _quoted(what: str, limit: int) -> str:
    """A call as steering names it, on one line and shortened inside its backticks, up to the
    end of its first sentence (a comment sent as a command: `# Done. Next…`)."""
    if len(what) > 2 and what[0] == what[-1] == "`":
        inside = " ".join(what[1:-1].split())
        end = _SENTENCE_END_INSIDE.search(inside)
        return f"`{_shortened(inside[:end.start() + 1] if end else inside, limit - 2)}`"
    return _clean(what, limit)


#: failures whose cause is not in the agent's changes (source code or text sent as a command, a
#: program not installed or not on the shell's PATH, an editor whose own check fails, a package name the package manager does
#: not know, a terminal still running an earlier command or waiting at an interpreter's prompt, a here-document sent on one
#: line, a tool that is not there, a call the tool
#: refused for its arguments): a text with a form for them (``*_outside_the_code``) gives their
#: advice rather than send the agent back to its changes (churn's has no firmer wording: "undo
#: your last changes" would mislead). A run that ran out of time has a form of its own
#: (``*_timed_out``): a hang is no result the changes failed to change, nor one no change can end.
CAUSE_OUTSIDE_THE_CODE = frozenset({"code_command", "prose_command", "missing_program", "lost_program", "failed_check", "unknown_package", "busy",
                                    "interpreter", "open_heredoc", "unknown_tool", "bad_arguments"})

#: what steering was about, for a pause to say, when it named no call
_ABOUT = {"loop": "the loop", "pace": "the PACE level", "stall": "the stall", "churn": "the error that keeps coming back",
          "rerun": "the reruns", "context": "the full context", "cascade": "the failing tools",
          "heartbeat": "the missing status report"}


def _about(evidence: dict[str, Any]) -> str:
    """What unanswered steering was about: "`cd src/` (cd: src/: No such file or directory)", two
    calls taken in turns, or the anomaly ("the PACE level (the latest failure: …)")."""
    action, outcome, latest = evidence.get("action"), evidence.get("outcome"), evidence.get("latest")
    if isinstance(action, str) and action:
        return _quoted(action, 70) + (f" ({_clean(outcome, 90)})" if isinstance(outcome, str) and outcome else "")
    one, other = evidence.get("tool_a"), evidence.get("tool_b")
    if isinstance(one, str) and isinstance(other, str) and one and other:
        return f"{_quoted(one, 50)} and {_quoted(other, 50)} taken in turns"
    if evidence.get("round"):
        return f"{_round(evidence)} taken in turns"
    anomaly = str(evidence.get("anomaly") or "")
    about = _ABOUT.get(anomaly, anomaly)
    again = evidence.get("again")
    if isinstance(again, str) and again:  # a call made again after it, with the same output
        return f"{about} ({_quoted(again, 70)} made again, with the same output)"
    return about + (f" (the latest failure: {_clean(latest, 90)})" if isinstance(latest, str) and latest else "")


def _failure(evidence: dict[str, Any]) -> str:
    """The error line a run failed with, in parentheses; nothing when its failure named none (its
    first line, a banner such as "=== Testing the issue ===", would say nothing of it)."""
    line = evidence.get("failure")
    return f" ({_clean(line, 100)})" if isinstance(line, str) and line else ""


def _file(path: Any) -> str:
    """A file by its path, on one line and cut at its start if need be: its end names the file."""
    return f"`{path_tail(' '.join(str(path).split()), 90)}`"


#: the placeholders worded from the whole evidence rather than from a value of it
_WORDED = {"doing": _doing, "why": _why, "repeated": _repeated, "about": _about, "failure": _failure}
#: the evidence's values with a wording of their own (the others: one short clause each)
_SHAPED = {
    "round": _round,
    "tools": lambda evidence: _clean(", ".join(map(str, evidence["tools"])), 120),
    "description": lambda evidence: _clean(evidence["description"] or "no description in the role's PACE plan", 160),
    "copy": lambda evidence: _file(evidence["copy"]),
    "edited": lambda evidence: _file(evidence["edited"]),
}


def template_values(finding: Finding, names: AbstractSet[str] | None = None) -> dict[str, str]:
    """The placeholders' values for a finding; ``names``: only these (a text names a few of the
    evidence's values: wording the others at every steering would be thrown away)."""
    evidence = finding.evidence
    values = {}
    for name in evidence.keys() | _WORDED.keys() if names is None else names:
        if name in _WORDED:
            values[name] = _WORDED[name](evidence)
        elif name in _SHAPED and name in evidence:
            values[name] = _SHAPED[name](evidence)
        elif isinstance(value := evidence.get(name), (str, int, float)) and not isinstance(value, bool):
            values[name] = _quoted(str(value), 100)
    return values


@cache
def _compiled(text: str) -> tuple[string.Template, frozenset[str]]:
    """A text as a template, and the placeholders it names."""
    template = string.Template(text)
    return template, frozenset(template.get_identifiers())


#: evidence the radio check keeps for itself (the outcome a steering answers, the episode and the
#: turn it began, the call it is about): never worded, and the outcome moves on at every turn, so a
#: persisting anomaly is worded from the memo without them
_UNWORDED = frozenset({"at", "episode", "since", "subject", "said_as"})


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class SteeringBook:
    """Default templates, overlaid by the user's ``steering.yaml`` files in order (the
    organization's, then a project's), each re-read when it changes."""

    def __init__(self, *override_paths: Path | None):
        self.override_paths = tuple(p for p in override_paths if p is not None)
        self._defaults = _load_defaults()
        self._templates = dict(self._defaults)
        self._stamps: tuple[tuple[int, int] | None, ...] | None = None
        #: (template, repeated, evidence) -> text: a persisting anomaly is worded the same at every check
        self._rendered: dict[tuple[Any, ...], str] = {}

    def _refresh(self) -> None:
        stamps = tuple(_stamp(path) for path in self.override_paths)
        if stamps == self._stamps:
            return
        self._stamps = stamps
        self._templates = dict(self._defaults)
        self._rendered.clear()
        for path, stamp in zip(self.override_paths, stamps):
            if stamp is not None:
                self._apply(path)

    def _apply(self, path: Path) -> None:
        try:
            # a regular file, not through a link, capped: a FIFO or /dev/zero must not hang the reader
            data = load_yaml(read_capped(path, MAX_OVERRIDES_BYTES).decode("utf-8")) or {}
        except Exception as exc:
            warn_once(f"{path}: cannot read steering overrides ({exc}); the texts below it are used")
            return
        if not isinstance(data, dict):
            warn_once(f"{path}: expected a mapping of steering key -> text; the texts below it are used")
            return
        for key, value in data.items():
            problem = check_template(str(key), value)
            if problem:
                warn_once(f"{path}: {key}: {problem}; the text below it is used for it")
                continue
            self._templates[str(key)] = " ".join(value.split())

    def templates(self) -> dict[str, str]:
        """Every text in use: the defaults with the user's overrides applied."""
        self._refresh()
        return dict(self._templates)

    def default(self, key: str) -> str | None:
        return self._defaults.get(key)

    def advice(self, error_type: Any) -> str:
        """The advice for an error type, quoted as $advice."""
        return self._templates.get(f"{ADVICE}{error_type}") or self._templates[f"{ADVICE}none"]

    def render(self, finding: Finding, repeated: bool = False, checked: bool = False) -> str:
        """The steering text; ``checked``: the override files were looked at for this check already."""
        if not checked:
            self._refresh()
        try:
            memo = (finding.template, repeated,
                    tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in finding.evidence.items() if k not in _UNWORDED))
            hash(memo)
        except TypeError:  # evidence holding something else unhashable: worded afresh
            return self._render(finding, repeated)
        text = self._rendered.get(memo)
        if text is None:
            if len(self._rendered) >= 256:
                self._rendered.clear()
            text = self._rendered[memo] = self._render(finding, repeated)
        return text

    def _render(self, finding: Finding, repeated: bool) -> str:
        # the failure's line is quoted as $outcome (loop, blocked) or $error (churn), or named as the latest (PACE)
        evidence = finding.evidence
        line = evidence.get("outcome") or evidence.get("error") or evidence.get("latest")
        action = evidence.get("action") or evidence.get("latest_action")
        kind = advice_kind(evidence.get("error_type"), line if isinstance(line, str) else None,
                           action if isinstance(action, str) else None)
        outside = kind in CAUSE_OUTSIDE_THE_CODE
        key = finding.template
        form = OUTSIDE_THE_CODE if outside else TIMED_OUT if kind == "timeout" else ""
        if form and key + form in self._templates:
            key += form
        if repeated and key + REPEATED in self._templates:
            key += REPEATED
        template, names = _compiled(self._templates.get(key) or self._templates[base_key(finding.template)])
        values = template_values(finding, names)
        if "advice" in names:
            values["advice"] = self.advice(kind)
        return template.safe_substitute(values)
