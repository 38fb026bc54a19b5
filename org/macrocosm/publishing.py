"""What a unit publishes on the shared volume: its SALUTE report, ``units/<unit>/salute.json``.

Everything in it is redacted first (tool calls and errors can quote a secret, and every
container on the volume can read it), and fields at their default are left out (a reader
fills them in again). The signals carry only what the XO's radio check reads
(:func:`org.supervisor.signals.signals_from_snapshot`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from org.contracts import SaluteReport
from org.kernel.files import first_error, remove_stale_temp_files
from org.kernel.log import logger, warn_once
from org.kernel.paths import UnsafePathError
from org.kernel.redact import redact
from org.kernel.salute import MAX_REPORT_BYTES
from org.lazy_patterns import lazy_pattern

from .signing import seal_report
from .volume import MESSAGE_SUFFIX, REPORT_NAME, VolumeLayout


def _redacted(value: Any, seen: dict[str, str]) -> Any:
    """``value`` (a JSON value) with :func:`redact` applied to every text in it."""
    if isinstance(value, str):
        found = seen.get(value)
        if found is None:
            found = seen[value] = redact(value)
        return found
    if isinstance(value, dict):
        return {key: _redacted(item, seen) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, seen) for item in value]
    return value


def _cut(value: dict[str, Any], where: tuple, length: int) -> bool:
    """Shorten the text at ``where`` to ``length`` characters; False when there is none."""
    *path, last = where
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return False
    if not isinstance(value, (dict, list)) or not isinstance(value[last], str):
        return False
    value[last] = value[last][:length]
    return True


def report_text(report: SaluteReport) -> str:
    """The report as a unit publishes it: every text redacted (a tool's output, a command or
    an error line may quote a secret, and the volume is shared), and the fields that hold
    their default left out, which a reader fills in again."""
    value = {"schema_version": report.schema_version, **report.model_dump(mode="json", exclude_defaults=True)}
    value = _redacted(value, {})
    for _ in range(8):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        try:
            SaluteReport.model_validate_json(text)
            return text + "\n"
        except ValidationError as exc:
            # a redaction mark can make a bounded text longer than its limit: cut it to the limit
            errors = [e for e in exc.errors() if e.get("type") == "string_too_long"]
            if not errors or not all(_cut(value, tuple(e["loc"]), int(e["ctx"]["max_length"])) for e in errors):
                raise
    raise ValueError("the redacted SALUTE report does not validate")


#: Unit folders whose stale temporary files this process has removed: once, at its first report.
_cleaned: set[Path] = set()
_REPORT_RE = lazy_pattern(re.escape(REPORT_NAME))
#: the reason a unit writes beside a steering file it refused (``unit.REASON_SUFFIX``)
_REASON_RE = lazy_pattern(r".+" + re.escape(MESSAGE_SUFFIX + ".reason"))


def remove_stale_temp_files_once(layout: VolumeLayout, unit: str) -> None:
    """What a unit killed mid-write left in its folder: a report, a refusal's reason."""
    folder = layout.unit_dir(unit)
    if folder in _cleaned:
        return
    _cleaned.add(folder)
    removed = remove_stale_temp_files(folder, _REPORT_RE) + remove_stale_temp_files(layout.rejected(unit), _REASON_RE)
    if removed:
        logger.info("removed %d temporary file(s) an interrupted write left (e.g. %s)", len(removed), removed[0])


def publish(layout: VolumeLayout, unit: str, report: SaluteReport, key: bytes | None = None) -> Path | None:
    """Write ``units/<unit>/salute.json`` atomically, confined to the volume (see
    :func:`report_text`), sealed with the unit's report ``key`` when it has one; the path, or
    None when it could not be (logged)."""
    path = layout.report(unit)
    try:
        text = report_text(report)
        if key is not None:
            text = seal_report(text.rstrip("\n"), key) + "\n"
    except Exception as exc:  # nothing unredacted is written instead; the agent goes on
        warn_once(f"{path}: the SALUTE report cannot be published ({first_error(exc)})", key=f"publish text {path}")
        return None
    if len(text.encode("utf-8")) > MAX_REPORT_BYTES:
        warn_once(f"{path}: the SALUTE report would be over the {MAX_REPORT_BYTES}-byte limit readers accept; not published")
        return None
    if not layout.root.is_dir():
        warn_once(f"{layout.root}: the shared volume folder does not exist (not mounted?); SALUTE report not published")
        return None
    try:
        layout.ensure_inside(path.parent)
        remove_stale_temp_files_once(layout, unit)
        layout.write_file(path, text.encode("utf-8"))
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{path}: cannot publish the SALUTE report: {getattr(exc, 'strerror', None) or exc}", key=f"publish {path}")
        return None
    return path
