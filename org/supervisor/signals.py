"""Snapshot <-> SALUTE signals: the radio check's inputs, carried in the report.

A unit writes :func:`signals_from_snapshot` of the very snapshot its own radio check
read; the XO rebuilds it with :func:`snapshot_from_signals`. Both then run the same
detectors, so the XO reaches the unit's own verdict (a property test checks it).
"""

from __future__ import annotations

import hashlib
import json

from org.contracts.role import Doctrine, PacePlan
from org.contracts.salute import OutcomeSignal, SaluteSignals
from org.kernel.outcomes import LEDGER_LIMIT, ToolOutcome
from org.supervisor.snapshot import Snapshot

_versions: dict[tuple[int, int], tuple[Doctrine, PacePlan | None, str]] = {}


def doctrine_version(doctrine: Doctrine, pace_plan: PacePlan | None) -> str:
    """A digest of the doctrine and PACE plan: equal numbers give an equal version."""
    key = (id(doctrine), id(pace_plan))
    cached = _versions.get(key)
    if cached is not None and cached[0] is doctrine and cached[1] is pace_plan:
        return cached[2]
    payload = {"doctrine": doctrine.model_dump(mode="json"), "pace_plan": pace_plan.model_dump(mode="json") if pace_plan else None}
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    if len(_versions) > 256:
        _versions.clear()
    _versions[key] = (doctrine, pace_plan, digest)
    return digest


def needed_outcomes(outcomes: tuple[ToolOutcome, ...]) -> tuple[ToolOutcome, ...]:
    """The outcomes the detectors read: the current task's (the ledger keeps at most 64),
    since churn and no-effect reruns are judged over the whole task."""
    return outcomes[-LEDGER_LIMIT:]


def signals_from_snapshot(s: Snapshot) -> SaluteSignals:
    outcomes = needed_outcomes(s.outcomes)
    return SaluteSignals(
        turn=s.turn,
        role_id=s.role_id,
        doctrine_version=doctrine_version(s.doctrine, s.pace_plan),
        doctrine=s.doctrine,
        pace_plan=s.pace_plan,
        pace_level=s.pace_level,
        turns_since_progress=s.turns_since_progress,
        progress_source=s.progress_source,
        current_step=_bounded(s.current_step),
        plan_name=_bounded(s.plan_name),
        bst_domain=_bounded(s.bst_domain),
        bst_confidence=s.bst_confidence,
        outcomes=[
            OutcomeSignal(
                turn=o.turn, tool=o.tool[:200], ok=o.ok, error_type=o.error_type[:64] if o.error_type else o.error_type,
                signature=o.signature, output_hash=o.output_hash, message_preview=o.message_preview[:200], novel=o.novel,
                kind=o.kind, error_line=_bounded(o.error_line), error_signature=o.error_signature, command=_bounded(o.command),
            )
            for o in outcomes
        ],
        context_fill=s.context_fill,
        native_repeat_warning=s.native_repeat_warning,
    )


def snapshot_from_signals(signals: SaluteSignals) -> Snapshot:
    return Snapshot(
        turn=signals.turn,
        role_id=signals.role_id,
        doctrine=signals.doctrine,
        pace_level=signals.pace_level,
        pace_plan=signals.pace_plan,
        turns_since_progress=signals.turns_since_progress,
        progress_source=signals.progress_source,
        current_step=signals.current_step,
        plan_name=signals.plan_name,
        bst_domain=signals.bst_domain,
        bst_confidence=signals.bst_confidence,
        outcomes=tuple(
            ToolOutcome(o.turn, o.tool, o.ok, o.error_type, o.signature, o.output_hash, o.message_preview, o.novel,
                        o.kind, o.error_line, o.error_signature, o.command)
            for o in signals.outcomes
        ),
        context_fill=signals.context_fill,
        native_repeat_warning=signals.native_repeat_warning,
    )


def _bounded(text: str | None) -> str | None:
    return text[:200] if isinstance(text, str) else None
