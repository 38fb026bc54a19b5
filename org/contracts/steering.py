"""Steering templates: the texts the supervisor injects, keyed by finding template.

``org/supervisor/steering.yaml`` holds the defaults; a user's ``steering.yaml`` in the
organizations folder overrides any of them. A key ending in ``.repeated`` is the firmer
wording used when the same anomaly persists after it was already steered once.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field, create_model

from .common import Contract

#: placeholders each template may use
PLACEHOLDERS: dict[str, frozenset[str]] = {
    "stall": frozenset({"turns", "limit", "doing"}),
    "loop_repeat": frozenset({"tool", "times", "outcome"}),
    "loop_oscillation": frozenset({"tool_a", "tool_b", "cycles"}),
    "context_warning": frozenset({"percent"}),
    "context_critical": frozenset({"percent"}),
    "cascade": frozenset({"tools", "count"}),
    "pace_contingent": frozenset({"level", "description"}),
    "pace_emergency": frozenset({"level", "description"}),
}

_fields = {}
for _key, _names in PLACEHOLDERS.items():
    _help = "Placeholders: " + ", ".join(f"${n}" for n in sorted(_names)) + ". Starts with [SUPERVISOR]; at most three sentences."
    _fields[_key] = (str | None, Field(None, pattern=r"^\s*\[SUPERVISOR\]", description=_help))
    _fields[f"{_key}_repeated"] = (str | None, Field(None, alias=f"{_key}.repeated", pattern=r"^\s*\[SUPERVISOR\]", description=_help))

SteeringTemplates = create_model(  # type: ignore[call-overload]
    "SteeringTemplates",
    __base__=Contract,
    __doc__="Steering texts by key; every key is optional in an override file.",
    **_fields,
)
SteeringTemplates.model_config = ConfigDict(extra="forbid", populate_by_name=True)
SteeringTemplates.model_rebuild(force=True)
