"""The JSON-answer contract between a supervisor and its model.

The prompt asks for exactly one JSON object matching the supervisor's pydantic schema
(:func:`json_instruction`, added to the system message by :func:`with_instruction`).
Models do not always obey: the answer may come in a ```json fence, or not be JSON, or
not match. :func:`parse_output` accepts the object, bare or fenced, and turns everything
else into :class:`ModelOutputInvalid` with a reason short enough for a log line.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ValidationError

from org.kernel.files import first_error

_FENCED = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)```", re.DOTALL)


class ModelOutputInvalid(Exception):
    """The model answered, but not with JSON that matches the schema; nothing of it is used.

    :attr:`reason` is short and fit for a log line; :attr:`raw_text` is the answer as received.
    """

    def __init__(self, reason: str, raw_text: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.raw_text = raw_text


def json_instruction(schema: type[BaseModel]) -> str:
    """The prompt text that asks for one JSON object matching ``schema``."""
    schema_text = json.dumps(schema.model_json_schema(), separators=(",", ":"), sort_keys=True)
    return ("Answer with exactly one JSON object and nothing else: no prose before or after it, no code fence. "
            f"It must validate against this JSON Schema:\n{schema_text}")


def with_instruction(messages: list[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    """``messages`` with ``instruction`` appended to the system message (one is added if missing)."""
    copied = [dict(m) for m in messages]
    if copied and copied[0].get("role") == "system":
        copied[0]["content"] = f"{copied[0].get('content') or ''}\n\n{instruction}".lstrip()
    else:
        copied.insert(0, {"role": "system", "content": instruction})
    return copied


def extract_json_text(text: str) -> str:
    """The JSON in an answer: the whole text, or the content of a ```json fenced block."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return stripped
    fenced = _FENCED.search(text)
    return fenced.group(1).strip() if fenced else stripped


def parse_output(text: str, schema: type[BaseModel]) -> BaseModel:
    """Parse and validate an answer; :class:`ModelOutputInvalid` with a short reason otherwise."""
    json_text = extract_json_text(text)
    if not json_text:
        raise ModelOutputInvalid("the answer is empty", text)
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as exc:
        raise ModelOutputInvalid(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", text) from None
    if not isinstance(data, dict):
        raise ModelOutputInvalid(f"expected a JSON object, found {type(data).__name__}", text)
    try:
        return schema.model_validate_json(json_text)
    except ValidationError as exc:
        raise ModelOutputInvalid(f"does not match {schema.__name__}: {first_error(exc, '(object)')}", text) from None


__all__ = ["ModelOutputInvalid", "extract_json_text", "json_instruction", "parse_output", "with_instruction"]
