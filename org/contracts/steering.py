"""Steering templates: the texts the supervisor injects, keyed by finding template.

``org/supervisor/steering.yaml`` holds the defaults; a user's ``steering.yaml`` in the
organizations folder overrides any of them. A key ending in ``.repeated`` is the firmer
wording used when the same anomaly persists after it was already steered once. A key ending in
``_outside_the_code`` is the wording used when the failure's cause is not in the code (text or
source code sent as a command, a program not installed, ...): it gives that cause's advice
instead of sending the agent back to its changes. A key ending in ``_timed_out`` is the wording
used when the run ran out of time: a hang is no result the changes failed to change.

Each text starts with ``[SUPERVISOR]``, has at most three sentences and uses only the
placeholders listed for its key. The same rules are checked by ``a0org validate`` and
when the supervisor loads the file.
"""

from __future__ import annotations

import string
from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, create_model, field_validator

from org.lazy_patterns import lazy_pattern

from .common import Contract

TAG = "[SUPERVISOR]"
MAX_SENTENCES = 3
SENTENCE_END = lazy_pattern(r"[.!?](?:\s+|$)")
REPEATED = ".repeated"
OUTSIDE_THE_CODE = "_outside_the_code"
TIMED_OUT = "_timed_out"

#: placeholders each template may use
PLACEHOLDERS: dict[str, frozenset[str]] = {
    "stall": frozenset({"turns", "limit", "doing", "repeated"}),
    "stall_editing": frozenset({"turns", "limit", "doing", "repeated", "edits"}),
    "loop_repeat": frozenset({"tool", "action", "times", "outcome", "advice"}),
    "loop_same_result": frozenset({"action", "times"}),
    "loop_same_result_unfinished": frozenset({"action", "times", "run", "failure"}),
    "loop_found_nothing": frozenset({"action", "times"}),
    "loop_same_look": frozenset({"action", "times"}),
    "loop_process_check": frozenset({"action", "times"}),
    "loop_same_edit": frozenset({"action", "times"}),
    "loop_reapplied": frozenset({"action", "times"}),
    "loop_oscillation": frozenset({"tool_a", "tool_b", "cycles"}),
    "loop_cycle": frozenset({"round", "count", "cycles"}),
    "churn": frozenset({"error", "times", "calls", "advice"}),
    "churn_outside_the_code": frozenset({"error", "times", "calls", "advice"}),
    "churn_unchanged": frozenset({"error", "times", "calls", "advice"}),
    "churn_detour": frozenset({"action", "error", "times", "working"}),
    "rerun": frozenset({"action", "times", "outcome"}),
    "rerun_outside_the_code": frozenset({"action", "times", "outcome", "advice"}),
    "rerun_timed_out": frozenset({"action", "times", "outcome", "advice"}),
    "rerun_unchanged": frozenset({"action", "times", "outcome"}),
    "rerun_unchanged_outside_the_code": frozenset({"action", "times", "outcome", "advice"}),
    "rerun_unchanged_timed_out": frozenset({"action", "times", "outcome", "advice"}),
    "rerun_other_copy": frozenset({"action", "copy", "edited", "outcome", "times"}),
    "rerun_other_copy_again": frozenset({"action", "copy", "edited", "outcome", "times"}),
    "loop_no_tool": frozenset({"times"}),
    "loop_printing": frozenset({"times", "action"}),
    "loop_not_run": frozenset({"times", "action", "outcome", "advice"}),
    "context_warning": frozenset({"percent"}),
    "context_critical": frozenset({"percent"}),
    "cascade": frozenset({"tools", "count"}),
    "pace_contingent": frozenset({"level", "description", "why"}),
    "pace_contingent_outside_the_code": frozenset({"level", "description", "why", "advice"}),
    "pace_contingent_timed_out": frozenset({"level", "description", "why", "advice"}),
    "pace_emergency": frozenset({"level", "description", "why"}),
    "heartbeat_stale": frozenset({"silence"}),
    "pause": frozenset({"nudges", "anomaly", "about"}),
    "pause_on_proof": frozenset({"repeats", "anomaly", "about"}),
    "blocked": frozenset({"action", "times", "outcome", "advice"}),
    "blocked_handoff": frozenset({"superiors", "task"}),
}
ADVICE = "advice."
#: error types that have advice (``advice.<type>``), quoted as $advice; "none": no error type; "busy": the
#: terminal did not run the command, an earlier one still running there; "unknown_tool": the agent called a
#: tool that is not there; "refused_edit", "ambiguous_edit", "unchanged_edit", "file_exists", "failed_check",
#: "code_command", "prose_command", "bad_arguments", "missing_program", "lost_program", "unknown_package",
#: "circular_import" and "django_setup": an edit the editor refused, one whose text to replace is there more than
#: once, one whose new text is its old, a `create` over a file that is there, one it refused because its own check
#: failed, source code or text sent as a command, a call the tool refused for its arguments, a program not
#: installed, one that ran here before and this shell did not find, a package name the package manager does not
#: know, a module imported while it is still being imported, a name the standard library of this Python no longer
#: has ("stdlib_removed"), Django refusing a script in its setup; "interpreter":
#: the terminal waits at an interactive interpreter's prompt (Python's `>>>`, pdb's), which reads what is sent;
#: "open_heredoc": a here-document sent on one line, its line breaks as the two characters `\n`, which never ends
ADVICE_TYPES: tuple[str, ...] = ("timeout", "busy", "unknown_tool", "not_found", "permission", "syntax", "network", "resource", "dependency",
                                 "execution", "test", "refused_edit", "ambiguous_edit", "unchanged_edit", "file_exists", "failed_check", "code_command",
                                 "prose_command", "bad_arguments", "missing_program", "lost_program", "unknown_package", "circular_import", "stdlib_removed", "django_setup", "interpreter", "open_heredoc", "none")


def base_key(key: str) -> str:
    return key.removesuffix(REPEATED)


def count_sentences(text: str) -> int:
    body = text[len(TAG):] if text.startswith(TAG) else text
    return len(SENTENCE_END.findall(body.strip())) or 1


def check_advice(key: str, text: Any) -> str | None:
    """Advice is one clause, quoted inside a steering sentence: no tag, no placeholder, no sentence end."""
    if key[len(ADVICE):] not in ADVICE_TYPES:
        return f"unknown error type for advice (known: {', '.join(ADVICE_TYPES)})"
    if not isinstance(text, str) or not text.strip():
        return f"expected text, found {type(text).__name__}"
    if text.strip().startswith(TAG) or "$" in text or SENTENCE_END.search(text.strip()):
        return "advice is one clause quoted inside a steering sentence: no [SUPERVISOR], no $, no sentence end"
    return None


def check_template(key: str, text: Any) -> str | None:
    """Why a template is unusable, or None when it is fine."""
    if key.startswith(ADVICE):
        return check_advice(key, text)
    allowed = PLACEHOLDERS.get(base_key(key))
    if allowed is None:
        return f"unknown steering key (known: {', '.join(sorted(PLACEHOLDERS))}, each optionally with {REPEATED})"
    if not isinstance(text, str):
        return f"expected text, found {type(text).__name__}"
    text = " ".join(text.split())
    if not text.startswith(TAG):
        return f"must start with {TAG}"
    names = set()
    for match in string.Template.pattern.finditer(text):
        if match.group("invalid") is not None:
            return "a '$' that starts no placeholder (write $$ for a dollar sign)"
        names.add(match.group("named") or match.group("braced"))
    unknown = names - allowed - {None}
    if unknown:
        return f"unknown placeholder(s) {', '.join('$' + n for n in sorted(unknown))}; allowed: {', '.join('$' + n for n in sorted(allowed))}"
    sentences = count_sentences(string.Template(text).safe_substitute({name: "x" for name in allowed}))
    if sentences > MAX_SENTENCES:
        return f"has {sentences} sentences; steering is at most {MAX_SENTENCES}"
    return None


def _check(cls: type, value: str | None, info: ValidationInfo) -> str | None:
    if value is not None:
        name = info.field_name
        key = name.replace("_repeated", REPEATED) if name.endswith("_repeated") else name
        key = ADVICE + name[len("advice_"):] if name.startswith("advice_") else key
        problem = check_template(key, value)
        if problem:
            raise ValueError(problem)
    return value


_fields: dict[str, Any] = {}
for _key, _names in PLACEHOLDERS.items():
    _help = "Placeholders: " + ", ".join(f"${n}" for n in sorted(_names)) + ". Starts with [SUPERVISOR]; at most three sentences."
    _fields[_key] = (str | None, Field(None, pattern=r"^\s*\[SUPERVISOR\]", description=_help))
    _fields[f"{_key}_repeated"] = (str | None, Field(None, alias=f"{_key}{REPEATED}", pattern=r"^\s*\[SUPERVISOR\]", description=_help))

for _type in ADVICE_TYPES:
    _fields[f"advice_{_type}"] = (str | None, Field(None, alias=f"{ADVICE}{_type}", description=f"Advice quoted as $advice for errors of type {_type}: one clause."))


class _ByNameOrAlias(Contract):
    # a key reads as its alias in files ("loop.repeated") and by its name in code
    model_config = ConfigDict(populate_by_name=True)


SteeringTemplates = create_model(  # type: ignore[call-overload]
    "SteeringTemplates",
    __base__=_ByNameOrAlias,
    __doc__="Steering texts by key; every key is optional in an override file.",
    __validators__={"check_rules": field_validator("*")(classmethod(_check))},
    **_fields,
)
