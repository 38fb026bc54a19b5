"""The XO's own copy of the roles: it judges every unit by these, never by what a report says.

A report names its role (``signals.role_id``); the doctrine (thresholds, escalation, the
pause count) and the PACE plan the radio check reads come from ``<XO home>/roles/<role id>.yaml``,
else from the pack's own ``roles/`` folder, else the default doctrine with no PACE plan (logged
once). So a unit, or a forged report, cannot lower the pause count of anyone, and no text of a
report's PACE plan reaches the steering. Role files are read once, as regular files (no link),
with a size cap; restart the XO after editing one.

Free text a report does supply (step and plan names, tool names, commands) is quoted into
steering only through :func:`sanitised`: bounded, one clause, none of the characters that
could open a tag or a template.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from org.contracts import Finding
from org.contracts.common import is_identifier
from org.contracts.role import Doctrine, PacePlan
from org.contracts.salute import SaluteSignals
from org.kernel import cascade, loading
from org.kernel.files import FileRefused, read_capped
from org.kernel.log import logger, warn_once
from org.kernel.paths import OrganizationLayout
from org.lazy_patterns import lazy_pattern

MAX_ROLE_BYTES = 256_000
#: A report's words quoted in steering: at most this long...
QUOTED_CHARS = 60
#: ...and only these characters (letters and digits of any script, and plain punctuation).
_UNSAFE = lazy_pattern(r"[^\w .,:/()'+=#@-]")

Judged = tuple[Doctrine, PacePlan | None]


class RoleBook:
    def __init__(self, folders: list[Path] | None = None, fixed: dict[str, Judged] | None = None):
        self.folders = list(folders or [])
        self._roles: dict[str, Judged] = dict(fixed or {})
        self._default: Judged = (Doctrine(), None)

    def judged(self, role_id: str) -> Judged:
        found = self._roles.get(role_id)
        if found is None:
            found = self._roles[role_id] = self._load(role_id)
        return found

    def signals(self, signals: SaluteSignals) -> SaluteSignals:
        """The report's signals, changed in place to carry the XO's doctrine and PACE plan for
        that role (the report was just parsed for this judgement; a copy would cost more)."""
        doctrine, plan = self.judged(signals.role_id)
        signals.doctrine = doctrine
        signals.pace_plan = plan
        return signals

    def _load(self, role_id: str) -> Judged:
        if not is_identifier(role_id):
            return self._default
        for folder in self.folders:
            path = folder / f"{role_id}.yaml"
            try:
                read_capped(path, MAX_ROLE_BYTES)  # a regular file, not a link, and not huge
                # as the kernel makes it: with the roles it extends (and overrides.yaml beside the folder)
                role = cascade.resolve_role(OrganizationLayout(folder.parent), role_id, roles_dir=folder).role
            except FileNotFoundError:
                continue
            except (FileRefused, OSError, UnicodeDecodeError, loading.DocumentError) as exc:
                warn_once(f"{path}: cannot use the XO's copy of role '{role_id}' ({exc}); that role is judged by the default doctrine")
                return self._default
            return (role.doctrine, role.pace_plan)
        warn_once(f"role '{role_id}': not in the XO's roles ({', '.join(map(str, self.folders)) or 'none'}); "
                  "its units are judged by the default doctrine, without a PACE plan", key=f"xo role {role_id}")
        return self._default


UNITS_FILE = "units.yaml"
MAX_UNITS_BYTES = 1_000_000


class UnitRoles:
    """Which role each unit is, as the XO decides: ``<XO home>/units.yaml``, ``unit id: role id``
    per line (``a0org keys unit NAME --role ROLE`` writes it). A unit's report naming another role
    changes nothing (logged once); a unit not in the table is judged by the role it reports, said
    once, until it is added. Read again when the file changes."""

    def __init__(self, path: Path | None):
        self.path = path
        self.table: dict[str, str] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._told: set[tuple[str, str]] = set()  # (unit, claimed role) already logged

    def refresh(self) -> None:
        if self.path is None:
            return
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if stamp == self._stamp:
            return
        self._stamp = stamp
        self.table = read_unit_roles(self.path) if stamp is not None else {}
        self._told.clear()  # a new table: each unit's case is news again

    def role(self, unit: str, claimed: str) -> str:
        """The role the XO judges ``unit`` by (each unit's case said once, however many units)."""
        chosen = self.table.get(unit)
        told = (unit, claimed)
        if chosen is None:
            if self.path is not None and told not in self._told:
                self._told.add(told)
                where = f"not in {self.path}" if self.table else f"no role given ({self.path} lists none)"
                logger.warning("unit '%s': %s; judged by the role its reports name (%r) until it is added "
                               "(`a0org keys unit %s --role ROLE`)", unit, where, claimed, unit)
            return claimed
        if claimed != chosen and told not in self._told:
            self._told.add(told)
            logger.warning("unit '%s' reports role %r; the XO judges it as %r (%s)", unit, claimed, chosen, self.path)
        return chosen


def read_unit_roles(path: Path) -> dict[str, str]:
    """The table in ``units.yaml``; entries that are not ``unit id: role id`` are left out (logged)."""
    try:
        value, _ = loading.parse(path, read_capped(path, MAX_UNITS_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (FileRefused, OSError, UnicodeDecodeError, loading.DocumentError) as exc:
        warn_once(f"{path}: cannot read the units' roles ({exc}); every unit is judged by the role it reports")
        return {}
    if value is None:
        return {}
    if not isinstance(value, dict):
        warn_once(f"{path}: not a mapping of unit id to role id; every unit is judged by the role it reports")
        return {}
    table = {}
    for unit, role in value.items():
        if isinstance(unit, str) and isinstance(role, str) and is_identifier(unit) and is_identifier(role):
            table[unit] = role
        else:
            warn_once(f"{path}: {str(unit)[:80]!r}: {str(role)[:80]!r} is not 'unit id: role id'; left out")
    return table


def safe_text(text: str, limit: int = QUOTED_CHARS) -> str:
    """Text from a unit, made fit to quote to another agent: a safe character set (no brackets
    or line breaks that could forge a heading or a message of its own), at most ``limit`` characters."""
    return " ".join(_UNSAFE.sub(" ", text).split())[:limit]


def _quoted(value: Any) -> Any:
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, (list, tuple)):
        return [_quoted(v) for v in value[:8]]
    return value


def sanitised(finding: Finding) -> Finding:
    """The finding with every text its evidence quotes from a report bounded and cleaned."""
    # "description" is the XO's own PACE plan's, not the report's
    evidence = {k: v if k == "description" else _quoted(v) for k, v in finding.evidence.items()}
    return finding.model_copy(update={"evidence": evidence})
