"""``a0org doctor --xo``: the XO's side of a macrocosm, checked as ``doctor`` checks a unit.

Its home (off the volume, private, a signing key that loads, every private file readable by
its owner only), the units' table (each unit's report key and the role the XO judges it by,
every role one the XO has), and what the XO knows of each unit it has seen (role, heartbeat,
nudges, pause), beside the volume (there, and an XO renewing its heartbeat on it).
"""

from __future__ import annotations

import time
from pathlib import Path

from org.doctor.report import INFO, OK, PROBLEM, WARNING, Check, Report

TOPICS = {"xo-home": "The XO's home", "xo-keys": "Keys", "xo-roles": "Units and roles", "xo-units": "Units seen",
          "xo-volume": "Volume"}


def diagnose_xo(home: Path | None, volume: Path | None, now: float | None = None) -> Report:
    report = Report(a0_root=f"XO home {home or '(not set)'}")
    if home is None:
        report.add(Check("xo-home", PROBLEM, "--home", "not given and $A0ORG_XO_HOME is not set",
                         "pass the XO's home (the folder a0org xo --home uses; a0org keys init makes <dir>/xo)"))
        return report
    report.add(*_home_checks(home, volume))
    if report.problems:
        return report
    report.add(*_key_checks(home))
    report.add(*_role_checks(home))
    report.add(*_unit_checks(home, time.time() if now is None else now, volume))
    report.add(*_volume_checks(volume, now))
    return report


def _home_checks(home: Path, volume: Path | None) -> list[Check]:
    from org.macrocosm.signing import OrganizationKeyError

    try:
        _check_home_like_the_xo(home, volume)
    except OrganizationKeyError as exc:
        return [Check("xo-home", PROBLEM, str(home), str(exc), "see docs/security.md#the-recommended-deployment")]
    return [Check("xo-home", OK, str(home), "a private folder off the volume, with an active signing key that loads")]


def _check_home_like_the_xo(home: Path, volume: Path | None) -> None:
    """What ``XOHome.load`` refuses, without counting a start in the epoch."""
    from org.macrocosm.keys import XOHomeLayout, checked_home

    checked_home(XOHomeLayout(home), volume)


def _key_checks(home: Path) -> list[Check]:
    from org.macrocosm.keys import KeyFolder, check

    problems = check(KeyFolder(home))  # every file and folder of the home is private
    if problems:
        return [Check("xo-keys", PROBLEM, p.split(":", 1)[0], p.split(": ", 1)[-1], "") for p in problems]
    signing = sorted(p.stem for p in (home / "signing").glob("*.pem"))
    return [Check("xo-keys", OK, str(home), f"every private file is readable by its owner only; signing keys: {', '.join(signing)}")]


def _role_checks(home: Path) -> list[Check]:
    from org.macrocosm.keys import XOHomeLayout
    from org.macrocosm.roles import read_unit_roles
    from org.resources import roles_dir

    layout = XOHomeLayout(home)
    table = read_unit_roles(layout.units_file)
    keys = sorted(p.name.removesuffix(".key") for p in layout.units_dir.glob("*.key")) if layout.units_dir.is_dir() else []
    folders = [layout.roles_dir, roles_dir()]
    checks: list[Check] = []
    for unit in sorted(set(keys) | set(table)):
        role = table.get(unit)
        subject = f"unit {unit}"
        if unit not in keys:
            checks.append(Check("xo-roles", PROBLEM, subject, f"role {role} in {layout.units_file}, but no report key: its reports are refused",
                                f"a0org keys unit {unit} --role {role} --dir <key folder>", {"unit": unit, "role": role, "key": False}))
        elif role is None:
            checks.append(Check("xo-roles", WARNING, subject, "has a report key but no role in the XO's table: judged by the role its reports name",
                                f"a0org keys unit {unit} --role ROLE --dir <key folder>", {"unit": unit, "role": None, "key": True}))
        elif not any((folder / f"{role}.yaml").is_file() for folder in folders):
            checks.append(Check("xo-roles", PROBLEM, subject, f"role {role} is in none of {', '.join(map(str, folders))}: judged by the default doctrine",
                                f"put {role}.yaml into {layout.roles_dir}, or give the unit a role the pack has", {"unit": unit, "role": role, "key": True}))
        else:
            checks.append(Check("xo-roles", OK, subject, f"judged as {role}", "", {"unit": unit, "role": role, "key": True}))
    if not checks:
        checks.append(Check("xo-roles", WARNING, str(layout.units_dir), "no unit has a report key yet", "a0org keys unit NAME --role ROLE --dir <key folder>"))
    return checks


def _unit_checks(home: Path, now: float, volume: Path | None = None) -> list[Check]:
    from org.macrocosm.store import read_states

    states = read_states(home, volume)
    if not states:
        return [Check("xo-units", INFO, str(home), "the XO has not seen a unit yet (or has not run with this home)")]
    checks = []
    for unit, state in sorted(states.items()):
        fresh = state.freshness(now)
        age = state.age(now)
        level = WARNING if fresh == "very_stale" or state.degraded or state.paused_turn is not None else OK
        words = (f"role {state.role_id or '-'}, last heard {'never' if age is None else f'{age:.0f} s ago'} ({(fresh or '-').replace('_', ' ')}), "
                 f"{state.nudges} nudge(s){_paused(state)}"
                 f"{f', heartbeat only: {state.degraded}' if state.degraded else ''}")
        checks.append(Check("xo-units", level, f"unit {unit}", words, "", {
            "unit": unit, "role": state.role_id, "age_seconds": None if age is None else round(age, 3), "freshness": fresh,
            "nudges": state.nudges, "paused": state.paused_turn is not None, "paused_itself": state.paused_itself, "degraded": state.degraded, "seq": state.seq}))
    return checks


def _paused(state) -> str:
    if state.paused_turn is None:
        return ""
    return ", paused by its own supervisor" if state.paused_itself else ", paused by the XO"


def _volume_checks(volume: Path | None, now: float | None) -> list[Check]:
    if volume is None:
        return [Check("xo-volume", INFO, "--volume", "not given ($A0ORG_VOLUME is not set): the volume is not checked")]
    from org.macrocosm.volume import XO_SILENT_AFTER, VolumeLayout, xo_silence

    layout = VolumeLayout(volume)
    if not layout.root.is_dir():
        return [Check("xo-volume", PROBLEM, str(volume), "not a folder", "mount the shared volume there, or pass --volume")]
    silence = xo_silence(layout, time.time() if now is None else now)
    if silence is None or silence >= XO_SILENT_AFTER:
        return [Check("xo-volume", WARNING, str(volume), "no XO renews xo/heartbeat: units steer themselves", "start a0org xo on it")]
    return [Check("xo-volume", OK, str(volume), f"an XO renewed xo/heartbeat {silence:.0f} s ago")]
