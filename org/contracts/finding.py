"""Finding: what one detector saw in one radio check, and the steering it produces."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import AnomalyType, Contract

Severity = Literal["warning", "critical", "emergency"]
SEVERITY_ORDER: tuple[str, ...] = ("warning", "critical", "emergency")


class Finding(Contract):
    anomaly: AnomalyType
    severity: Severity = "warning"
    template: str = Field(description="Key of the steering template that words this finding.")
    turn: int = Field(ge=0, description="Supervisor turn of the radio check.")
    evidence: dict[str, Any] = Field(default_factory=dict, description="Values the template may quote.")
    cooldown_exempt: bool = False
    text: str | None = Field(None, description="The rendered steering, once worded.")
