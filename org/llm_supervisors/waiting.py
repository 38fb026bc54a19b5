"""The line Agent-Zero's UI shows while a task's start waits for supervisor runs.

A stalled endpoint must never hold the user's message silently: while the agent waits,
one ``info`` item says for whom and for how long at most; when the wait ends, the same
item says how it ended (all results in, or which runs go on and when their results
come).
"""

from __future__ import annotations

from typing import Any, Iterable

from org.kernel.agent_zero import AgentPort, ui_update

from .records import LABELS
from .worker import Flight


def _names(flights: Iterable[Flight]) -> str:
    labels = [LABELS.get(f.request.supervisor, f.request.supervisor) for f in flights]
    return ", ".join(labels[:1] + [label[0].lower() + label[1:] for label in labels[1:]])


def waiting_line(port: AgentPort | None, going: list[Flight], limit: float | None) -> Any:
    """Show what the task waits for; the UI item (None without an agent or a UI)."""
    if port is None:
        return None
    most = f" (at most {limit:g} s)" if limit is not None else ""
    return port.log(type="info", heading=f"Waiting for supervisor results: {_names(going)}{most}",
                  content="The supervisors review the previous task on their own model; their results shape this one.")


def wait_ended(item: Any, still_going: list[Flight], seconds: float) -> None:
    """Say how the wait ended, on the same UI item."""
    if item is None:
        return
    if not still_going:
        ui_update(item, heading=f"Supervisor results in after {seconds:.1f} s")
        return
    verb = "is" if len(still_going) == 1 else "are"
    ui_update(item, heading=f"{_names(still_going)} {verb} still running after {seconds:.1f} s; "
                            "results that come later are applied at the next task",
              content="The agent goes on without waiting longer (wait_seconds in supervisors.yaml).")


__all__ = ["wait_ended", "waiting_line"]
