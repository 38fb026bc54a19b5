"""The unit's side of the macrocosm: publish SALUTE reports; apply the XO's steering (:mod:`.inbox`).

A unit is one Agent-Zero container linked to a shared volume (:mod:`.link`). Each turn its
agent 0 writes ``units/<unit>/salute.json`` (redacted, see :mod:`.publishing`), sealed with the
unit's own key, and leaves the
steering to the XO while one runs there (``xo/heartbeat`` is fresh), to its own supervisor
otherwise. Before each prompt it drains ``units/<unit>/inbox/`` (see :mod:`.inbox`).

Without a volume nothing here touches the disk; with an empty inbox a drain is one
directory listing.
"""

from __future__ import annotations

import time
from logging import INFO, WARNING
from typing import Any

from org.contracts import RoleProfile
from org.contracts.learning import MAX_LEARNINGS
from org.contracts.salute import SteeringRefusal
from org.kernel.agent_zero import AgentPort
from org.kernel.dispatcher import unit_report
from org.kernel.log import logger
from org.kernel.turn_readings import TurnReadings
from org.supervisor.learnings import lessons_noted
from org.supervisor.microcosm import Publisher
from org.supervisor.signals import signals_from_snapshot
from org.supervisor.snapshot import Snapshot

from .inbox import (  # noqa: F401 (the hooks and tests reach the inbox through this module)
    APPLIED_KEY,
    APPLIED_LIMIT,
    KEPT_PER_FOLDER,
    REASON_SUFFIX,
    TASK_END_KEY,
    drain_inbox,
    note_task_end,
    outdated,
    refused_steering,
    steering_text,
    taken_seq,
    xo_heading,
)
from .link import UnitLink, current_link, host_unit_id  # noqa: F401
from .publishing import publish
from .volume import ENV_VOLUME, XO_SILENT_AFTER, xo_running

# --------------------------------------------------------------------------- publishing


def refusal(data: dict) -> SteeringRefusal | None:
    """The latest refused steering as the report carries it; None when none (or a bad record)."""
    refused = refused_steering(data)
    try:
        return SteeringRefusal.model_validate(refused) if refused else None
    except ValueError:
        return None


#: ``agent.data`` (not saved with the chat): the supervision mode last shown in the UI log.
MODE_KEY = "_org_supervision_mode"
XO_STEERS, OWN_SUPERVISOR, NO_VOLUME = "xo", "own", "no volume"


def supervision_mode(link: UnitLink, now: float) -> str:
    """Who steers a linked unit's agent: a running XO, or (no XO, no volume) its own supervisor."""
    if not link.layout.root.is_dir():
        return NO_VOLUME
    return XO_STEERS if xo_running(link.layout, now) else OWN_SUPERVISOR


def mode_in_words(link: UnitLink, mode: str) -> str:
    volume, unit = link.layout.root, link.unit
    if mode == XO_STEERS:
        return f"Unit '{unit}' reports to the XO running on {volume}; the XO steers this agent."
    if mode == NO_VOLUME:
        return (f"The shared volume {volume} (${ENV_VOLUME}) does not exist (not mounted?); this agent's own "
                "supervisor steers it until the volume is there.")
    return (f"No XO is running on {volume} (no heartbeat for {XO_SILENT_AFTER:g} s); unit '{unit}' keeps publishing "
            "its reports and this agent's own supervisor steers it until an XO runs.")


def announce_mode(port: AgentPort, link: UnitLink, mode: str) -> None:
    """One UI log line (and one log line) each time the mode changes, so the user sees who steers."""
    if port.data.get(MODE_KEY) == mode:
        return
    port.data[MODE_KEY] = mode
    words = mode_in_words(link, mode)
    port.log(type="info", heading=f"Supervisor: {'XO' if mode == XO_STEERS else 'own supervision'}", content=words)
    logger.log(WARNING if mode == NO_VOLUME else INFO, "%s", words)


def publish_turn(readings: TurnReadings, port: AgentPort, link: UnitLink, role: RoleProfile, snapshot: Snapshot,
                 paused_turn: int | None = None) -> bool:
    """Publish the unit's report for this turn, carrying the snapshot a radio check reads
    (``paused_turn``: its own supervisor has just paused the chat; the report says so).

    True when a running XO steers the agent; False when its own supervisor must (the report
    is published all the same when the volume is there, so an XO that starts has it).
    """
    mode = supervision_mode(link, time.time())
    announce_mode(port, link, mode)
    if mode == NO_VOLUME:
        return False
    data = port.data
    signals = signals_from_snapshot(snapshot)
    lessons = lessons_noted(data)
    signals = signals.model_copy(update={"steering_seq": taken_seq(data), "steering_refused": refusal(data),
                                         "paused_turn": paused_turn,
                                         "learnings": (signals.learnings + lessons)[-MAX_LEARNINGS:] if lessons else signals.learnings})
    report = unit_report(readings, data, role, link.unit, signals)
    if report is not None:
        if report.reason == "task_end":
            note_task_end(data, snapshot.turn)
        publish(link.layout, link.unit, report, link.report_key)
    return mode == XO_STEERS


def publisher_for(readings: TurnReadings, port: AgentPort) -> Publisher | None:
    """What agent 0 does at a turn's end while linked to a volume (see :func:`publish_turn`)."""
    link = current_link()
    if link is None:
        return None
    return lambda role, snapshot, paused_turn=None: publish_turn(readings, port, link, role, snapshot, paused_turn)
