"""The plain snapshot of operational state that every detector reads.

The microcosm adapter builds it from what the hooks read of the agent; a macrocosm adapter builds it
from a SALUTE file. The detectors never see where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from org.contracts.role import Doctrine, PacePlan
from org.contracts.salute import OutcomeSignal
from org.kernel.outcomes import ToolOutcome, last_in_a_row, ran_nothing, watched_for_loops


@dataclass(frozen=True)
class Snapshot:
    turn: int
    role_id: str
    doctrine: Doctrine
    pace_level: str | None = None
    pace_plan: PacePlan | None = None
    turns_since_progress: int | None = None
    turns_without_tool: int | None = None  # the model's replies in a row without a tool call
    progress_source: str | None = None  # "htn" or "pack"
    current_step: str | None = None
    plan_name: str | None = None
    bst_domain: str | None = None
    bst_confidence: float | None = None
    outcomes: tuple[ToolOutcome | OutcomeSignal, ...] = ()  # oldest first; the XO's come from a report
    context_fill: float | None = None
    native_repeat_warning: bool = False  # Agent-Zero warned about a repeated response this turn

    # what several detectors read, worked out once per snapshot

    @cached_property
    def watched(self) -> list[ToolOutcome | OutcomeSignal]:
        """The outcomes that can loop: not polls of a running process, nor the doctrine's exempt tools (pollers, waits)."""
        return watched_for_loops(self.outcomes, self.doctrine.loop.exempt_tools)

    @cached_property
    def not_run_in_a_row(self) -> int:
        """How many of the last watched calls, in a row, ran nothing (``classify.did_not_run``)."""
        return last_in_a_row(self.watched, ran_nothing)
