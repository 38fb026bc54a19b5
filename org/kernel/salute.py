"""Writing SALUTE reports: atomically, with a bounded archive, and the supervisor's health correction."""

from __future__ import annotations

import json
import os
from collections import deque
from datetime import datetime, timezone
from pathlib import Path

from org.contracts import SaluteReport
from org.contracts.common import HEALTH_ORDER
from org.contracts.salute import SupervisorAssessment

from .files import atomic_write_text
from .log import warn_once
from .paths import OrganizationLayout

#: A report bigger than this is not a report; readers refuse it.
MAX_REPORT_BYTES = 256_000


def health_for(level: str, consecutive_failures: int) -> str:
    """The dispatcher's health, from its PACE level and the tool failures in a row."""
    if level in ("contingent", "emergency"):
        return "critical"
    if level == "alternate" or consecutive_failures >= 2:
        return "degraded"
    return "nominal"


def _stamp(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond:06d}Z"


def write_report(layout: OrganizationLayout, report: SaluteReport, archive_limit: int) -> Path | None:
    """Write ``<role>_latest.json`` and an archive copy; keep at most ``archive_limit`` archived.

    Returns the latest report's path once that is written; an archive problem is only logged.
    Written atomically but not synced: a report is rewritten every few turns, and a sync would
    cost the agent's turn milliseconds on a disk.
    """
    role_id = report.unit.role_id
    text = report.model_dump_json(indent=2) + "\n"
    try:
        latest = layout.latest_report(role_id)
        atomic_write_text(latest, text, durable=False)
    except OSError as exc:
        warn_once(f"{layout.reports_dir}: cannot write the SALUTE report for '{role_id}': {exc.strerror or exc}")
        return None
    try:
        archived = layout.archive_report(role_id, _stamp(report.time.timestamp))
        if archive_limit > 0:
            atomic_write_text(archived, text, durable=False)
        prune_archive(layout, role_id, archive_limit, archived if archive_limit > 0 else None)
    except OSError as exc:
        warn_once(f"{layout.archive_dir}: cannot archive the SALUTE report for '{role_id}': {exc.strerror or exc}")
    return latest


#: (archive folder, role) -> archived files, oldest first. Listed once, then kept up to
#: date, so a write does not rescan the folder.
_archives: dict[tuple[Path, str], deque[Path]] = {}


def _archived(layout: OrganizationLayout, role_id: str) -> deque[Path]:
    key = (layout.archive_dir, role_id)
    if key not in _archives:
        prefix = f"{role_id}_"
        _archives[key] = deque(sorted(
            p for p in layout.archive_dir.glob(f"{prefix}*.json") if p.name[len(prefix):len(prefix) + 1].isdigit()
        ))
    return _archives[key]


def prune_archive(layout: OrganizationLayout, role_id: str, keep: int, written: Path | None = None) -> None:
    """Keep the newest ``keep`` archived reports of a role."""
    archived = _archived(layout, role_id)
    if written is not None and (not archived or archived[-1] != written):
        archived.append(written)
    while len(archived) > keep:
        try:
            archived.popleft().unlink()
        except OSError:
            pass


#: latest report -> (its mtime and size, the health it holds): spares re-reading a
#: report that has not changed since the last radio check.
_known_health: dict[Path, tuple[tuple[int, int], str, str]] = {}


def correct_health(layout: OrganizationLayout, role_id: str, health: str, anomalies: list[str], turn: int) -> bool:
    """Set ``status.health`` in the latest report to what the supervisor sees when that differs
    from the report's, both ways: worse when it finds anomalies the dispatcher's numbers do
    not show, better when the dispatcher's numbers look bad but no anomaly is there.

    It never goes below what the dispatcher's own numbers in the report say.
    Returns True when the report was rewritten.
    """
    try:
        path = layout.latest_report(role_id)
        st = os.stat(path)
    except OSError:
        return False
    known = _known_health.get(path)
    if known is not None and known[0] == (st.st_mtime_ns, st.st_size) and max(health, known[2], key=HEALTH_ORDER.index) == known[1]:
        return False
    try:
        if st.st_size > MAX_REPORT_BYTES:
            warn_once(f"{path}: {st.st_size} bytes, over the {MAX_REPORT_BYTES}-byte limit for a SALUTE report; health not corrected")
            return False
        report = SaluteReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except Exception as exc:
        warn_once(f"{path}: cannot read it to correct health: {exc}")
        return False
    if len(_known_health) > 256:
        _known_health.clear()
    floor = health_for(report.status.pace_level, report.environment.tool_failures_consecutive or 0)
    _known_health[path] = ((st.st_mtime_ns, st.st_size), report.status.health, floor)
    health = max(health, floor, key=HEALTH_ORDER.index)
    if health == report.status.health:
        return False
    now = datetime.now(timezone.utc)
    report.status.health = health  # type: ignore[assignment]
    report.status.health_source = "supervisor"
    report.reason = "supervisor"
    report.supervisor = SupervisorAssessment(turn=turn, health=health, anomalies=anomalies, assessed_at=now)  # type: ignore[arg-type]
    try:
        atomic_write_text(path, report.model_dump_json(indent=2) + "\n", durable=False)
        st = os.stat(path)
    except OSError as exc:
        warn_once(f"{path}: cannot write the health correction: {exc.strerror or exc}")
        return False
    _known_health[path] = ((st.st_mtime_ns, st.st_size), health, floor)
    return True
