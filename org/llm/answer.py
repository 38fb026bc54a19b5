"""The JSON-answer contract between a supervisor and its model.

The prompt asks for exactly one JSON object matching the supervisor's pydantic schema
(:func:`json_instruction`, added to the system message by :func:`with_instruction`).
Models do not always obey, so :func:`parse_output` is tolerant where tolerance is
harmless and strict everywhere else:

* **Finding the object.** A byte-order mark and ``<think>``/``<thinking>``/``<reasoning>``
  blocks are removed; then the object is the whole text, a fenced block (also a fence
  opened on the same line as the JSON), or the JSON objects in the prose around it. When
  several are found, the one that validates against the schema wins: one valid as it is
  before one that needed tolerance, then the one that fills the most of the schema's fields,
  then the last (a quoted example comes before the real answer, and holds less).
* **Depth.** JSON nested deeper than the parser's stack is not JSON here: the answer is
  invalid (and kept), never an exception.
* **Schema tolerance** (:mod:`org.llm.tolerance`): an unknown field is ignored, free text
  over its length limit is cut, a list over its limit keeps its first items; identifiers
  and fixed values are never changed.
* Everything else is :class:`ModelOutputInvalid`, whose :attr:`~ModelOutputInvalid.errors`
  go back to the model in the repair round (:mod:`org.llm.client`).

What was done to an answer is returned as notes, for the run record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from org.lazy_patterns import lazy_pattern

from .tolerance import tolerate

_THINKING = lazy_pattern(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
#: A fenced block; its content may start on the fence's own line (```json {"a": 1}```).
_FENCED = lazy_pattern(r"```[ \t]*(?:json5?|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
#: Object starts tried in prose before giving up (each is one bounded decode attempt).
MAX_CANDIDATES = 200
#: Validation errors listed in a reason and sent back in a repair round.
MAX_ERRORS = 12


class ModelOutputInvalid(Exception):
    """The model answered, but not with JSON that matches the schema; nothing of it is used.

    :attr:`reason` is short and fit for a log line; :attr:`raw_text` is the (last) answer as
    received; :attr:`errors` are the problems, one line each, as the repair round sends
    them; :attr:`notes` say what was tried. The client adds :attr:`answers` (every raw
    answer of the call, repair included).
    """

    def __init__(self, reason: str, raw_text: str = "", errors: list[str] | None = None, notes: list[str] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.raw_text = raw_text
        self.errors = errors or [reason]
        self.notes = notes or []
        self.answers: list[str] = [raw_text] if raw_text else []
        self.repairs = 0


@dataclass
class ParsedAnswer:
    """A validated answer and what had to be done to it."""

    value: BaseModel
    notes: list[str] = field(default_factory=list)


def json_instruction(schema: type[BaseModel], schema_in_request: bool = False) -> str:
    """The prompt text that asks for one JSON object matching ``schema``; the schema itself only when
    the request does not carry it already (``response_format`` ``json_schema``): it is sent once."""
    ask = "Answer with exactly one JSON object and nothing else: no prose before or after it, no code fence. "
    if schema_in_request:
        return ask + f"It must validate against the JSON Schema {schema.__name__} given as the response format."
    schema_text = json.dumps(schema.model_json_schema(), separators=(",", ":"), sort_keys=True)
    return ask + f"It must validate against this JSON Schema:\n{schema_text}"


def with_instruction(messages: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """``messages`` with ``instruction`` appended to the system message (one is added if missing)."""
    copied = [dict(m) for m in messages]
    if copied and copied[0].get("role") == "system":
        copied[0]["content"] = f"{copied[0].get('content') or ''}\n\n{instruction}".lstrip()
    else:
        copied.insert(0, {"role": "system", "content": instruction})
    return copied


def content_text(content: Any) -> str:
    """A message's ``content`` as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") in ("text", "output_text") and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return ""


def cleaned(text: str) -> tuple[str, list[str]]:
    """The answer without a byte-order mark and thinking blocks, and notes saying what went."""
    notes = []
    if text.lstrip().startswith("\ufeff"):
        text = text.lstrip().lstrip("\ufeff")
        notes.append("byte-order mark removed")
    without = _THINKING.sub("", text)
    if without != text:
        notes.append("reasoning block (<think>) removed")
    return without.strip(), notes


def candidates(text: str) -> list[tuple[str, dict[str, Any]]]:
    """JSON objects in an answer, best first: the whole text, fenced blocks, objects in prose."""
    found: list[tuple[str, dict[str, Any]]] = []
    whole = _object(text)
    if whole is not None:
        return [("whole", whole)]
    for block in _FENCED.findall(text):
        value = _object(block.strip())
        if value is not None:
            found.append(("fence", value))
    decoder = json.JSONDecoder()
    position, tried = text.find("{"), 0
    while position >= 0 and tried < MAX_CANDIDATES:
        tried += 1
        try:
            value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(("prose", value))
        position = text.find("{", end)
    return found


def _object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def extract_json_text(text: str) -> str:
    """The JSON object an answer holds, as text (the cleaned answer when none is found)."""
    body, _ = cleaned(text)
    found = candidates(body)
    return json.dumps(found[0][1]) if found else body


_WHERE = {"fence": "JSON taken from a fenced block", "prose": "JSON taken from the prose around it"}


def parse_output(text: str, schema: type[BaseModel]) -> BaseModel:
    """Parse and validate an answer; :class:`ModelOutputInvalid` with a short reason otherwise."""
    return parse_answer(text, schema).value


def parse_answer(text: str, schema: type[BaseModel]) -> ParsedAnswer:
    """The validated answer and notes on what was done to it; :class:`ModelOutputInvalid` otherwise."""
    body, notes = cleaned(text)
    if not body:
        raise ModelOutputInvalid("the answer is empty", text, ["the answer is empty: give the JSON object"], notes)
    found = candidates(body)
    if not found:
        reason = _not_json(body)
        raise ModelOutputInvalid(reason, text, [f"{reason}: give exactly one JSON object"], notes)
    failures: list[list[str]] = []
    valid = []
    for index, (where, data) in enumerate(found):
        outcome = tolerate(data, schema)
        if outcome.value is None:
            failures.append(outcome.errors)
            continue
        filled = sum(1 for name in schema.model_fields if data.get(name) not in (None, "", [], {}))
        valid.append(((bool(outcome.notes), -filled, -index), where, outcome))
    if valid:
        _, where, outcome = min(valid, key=lambda entry: entry[0])
        chosen = [f"the best of {len(valid)} valid JSON objects in the answer"] if len(valid) > 1 else []
        return ParsedAnswer(outcome.value, notes + ([_WHERE[where]] if where in _WHERE else []) + chosen + outcome.notes)
    errors = min(failures, key=len)  # the candidate closest to valid is the one to repair
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    raise ModelOutputInvalid(f"does not match {schema.__name__}: {errors[0]}{more}", text, errors[:MAX_ERRORS], notes)


def _not_json(body: str) -> str:
    start = body.find("{")
    if start < 0:
        stripped = body.lstrip()
        if stripped[:1] in "[\"0123456789-tfn" and _any_json(stripped) is not None:
            return f"expected a JSON object, found {type(_any_json(stripped)).__name__}"
        return "not valid JSON: no JSON object in the answer"
    try:
        json.loads(body[start:])
    except json.JSONDecodeError as exc:
        return f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        return "not valid JSON: nested too deeply"
    return "not valid JSON"


def _any_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


__all__ = [
    "ModelOutputInvalid",
    "ParsedAnswer",
    "candidates",
    "cleaned",
    "content_text",
    "extract_json_text",
    "json_instruction",
    "parse_answer",
    "parse_output",
    "with_instruction",
]
