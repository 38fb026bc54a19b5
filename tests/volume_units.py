"""Units on a shared volume, for tests and benchmarks: SALUTE reports from scenarios.

A scenario is a function of the turn that gives the unit's snapshot, built on the
codegen role (``roles/codegen.yaml``); the report carries
``signals_from_snapshot(snapshot)`` exactly as a unit writes it. Importable::

    from tests.volume_units import publish, messages
    publish(volume, "unit-1", "stall", turn=3)

and runnable as a unit process::

    python tests/volume_units.py write --volume DIR --unit unit-1 --scenario stall --turns 30
    python tests/volume_units.py read --path DIR/units/unit-1/salute.json --seconds 5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from org.contracts import RoleProfile, SaluteReport  # noqa: E402
from org.contracts.role import Doctrine  # noqa: E402
from org.kernel import loading  # noqa: E402
from org.kernel.files import (
    FileRefused,  # noqa: E402
    atomic_write_text,  # noqa: E402
)
from org.kernel.outcomes import ToolOutcome  # noqa: E402
from org.macrocosm.keys import XOHome, XOHomeLayout  # noqa: E402
from org.macrocosm.roles import RoleBook  # noqa: E402
from org.macrocosm.signing import Keyring, SigningKey, key_id, seal_report  # noqa: E402
from org.macrocosm.volume import VolumeLayout, read_report  # noqa: E402
from org.resources import roles_dir  # noqa: E402
from org.supervisor.signals import signals_from_snapshot  # noqa: E402
from org.supervisor.snapshot import Snapshot  # noqa: E402

ROLE: RoleProfile = loading.load(RoleProfile, roles_dir() / "codegen.yaml")


# ----- keys: the XO's signing key and each unit's report key, fixed for tests -------------


def _test_signer() -> SigningKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"a0org test XO signing key").digest())
    return SigningKey(key_id(private.public_key()), private)


SIGNER = _test_signer()
#: what a unit holding the test XO's public key accepts
KEYRING = Keyring({SIGNER.key_id: SIGNER.private.public_key()})


def unit_key(unit: str) -> bytes:
    """The report key of a unit in tests."""
    return hashlib.sha256(b"a0org test unit key:" + unit.encode()).digest()


class _EveryUnitsKey(dict):
    def get(self, unit, default=None):  # the XO looks a unit's key up with get()
        return unit_key(unit)


def test_home(root: Path | str = "/nonexistent/a0org-test-xo-home", epoch: int = 1) -> XOHome:
    """An XO home with the test signing key and every unit's test report key registered."""
    return XOHome(XOHomeLayout(Path(root)), SIGNER, epoch, _EveryUnitsKey())


test_home.__test__ = False  # not a test


class TrustingRoles(RoleBook):
    """Judges each unit by the doctrine its report carries: for tests of the ladder and the
    heartbeats, which publish a doctrine per test. A real XO never does this (see roles.py)."""

    def signals(self, signals):
        return signals


def sign(payload: dict[str, Any], signer: SigningKey = SIGNER) -> dict[str, Any]:
    """The payload signed as the XO signs steering."""
    body = {**payload, "key_id": signer.key_id}
    body.pop("signature", None)
    return {**body, "signature": signer.sign(body)}


def doctrine(**changes: Any) -> Doctrine:
    """The codegen doctrine with some numbers changed, e.g. ``doctrine(cooldown_turns=0,
    heartbeat={"stale_after_seconds": 1, "very_stale_after_seconds": 2})``."""
    return Doctrine.model_validate({**ROLE.doctrine.model_dump(), **changes})


def _ok(turn: int, n: int) -> ToolOutcome:
    return ToolOutcome(turn, "code_execution_tool", True, None, f"sig-{n}", f"out-{n}", f"result {n}", True)


def _failing(turn: int, tool: str, error: str = "execution", sig: str = "same", out: str = "err") -> ToolOutcome:
    return ToolOutcome(turn, tool, False, error, sig, out, "Traceback: boom", False)


def _healthy(turn: int, d: Doctrine) -> dict[str, Any]:
    return {"turns_since_progress": 0, "progress_source": "pack", "outcomes": tuple(_ok(turn, turn * 10 + i) for i in range(3)), "context_fill": 0.3}


def _stall(turn: int, d: Doctrine) -> dict[str, Any]:
    # always just over the limit: each report is a stall that started at another turn (new
    # evidence), so steering about it may come again whenever its cooldown allows
    return {"turns_since_progress": d.max_turns_without_progress + 1, "progress_source": "pack", "current_step": "write the parser", "context_fill": 0.3}


# The loop and cascade scenarios show their anomaly with new evidence at every report
# (another result, other tools), so steering about it may come at every check: the XO's
# plumbing is what they test. ``loop_ignored`` keeps its evidence.

def _loop(turn: int, d: Doctrine) -> dict[str, Any]:
    run = tuple(_failing(turn, "code_execution_tool", out=f"err-{turn}") for _ in range(d.loop.repeat_threshold))
    return {"turns_since_progress": 0, "progress_source": "pack", "outcomes": run, "context_fill": 0.3}


def _loop_ignored(turn: int, d: Doctrine) -> dict[str, Any]:
    """The same failing call at every report, the task not moving: steering about it is ignored."""
    run = tuple(_failing(turn, "code_execution_tool") for _ in range(d.loop.repeat_threshold))
    return {"turns_since_progress": turn, "progress_source": "pack", "outcomes": run, "context_fill": 0.3}


def _context(turn: int, d: Doctrine) -> dict[str, Any]:
    # between the warning and the critical threshold: a warning
    return {"turns_since_progress": 0, "progress_source": "pack", "context_fill": (d.context_thresholds.warning + d.context_thresholds.critical) / 2}


def _cascade(turn: int, d: Doctrine) -> dict[str, Any]:
    tools = [f"tool_{turn}_{i}" for i in range(d.cascade.distinct_tools)]
    return {"turns_since_progress": 0, "progress_source": "pack", "outcomes": tuple(_failing(turn, t, sig=t) for t in tools)}


def _pace_emergency(turn: int, d: Doctrine) -> dict[str, Any]:
    return {"turns_since_progress": 0, "progress_source": "pack", "pace_level": "emergency"}


#: scenario name -> (turn, doctrine) -> Snapshot fields. The anomaly each one shows is in its name.
SCENARIOS: dict[str, Callable[[int, Doctrine], dict[str, Any]]] = {
    "healthy": _healthy,
    "stall": _stall,
    "loop": _loop,
    "loop_ignored": _loop_ignored,
    "context": _context,
    "cascade": _cascade,
    "pace_emergency": _pace_emergency,
}


def scenario_snapshot(scenario: str, turn: int, unit_doctrine: Doctrine | None = None) -> Snapshot:
    d = unit_doctrine or ROLE.doctrine
    return Snapshot(turn=turn, role_id=ROLE.role_id, doctrine=d, pace_plan=ROLE.pace_plan, **SCENARIOS[scenario](turn, d))


def report_for(
    unit: str,
    snapshot: Snapshot,
    *,
    state: str = "active",
    health: str = "nominal",
    when: datetime | float | None = None,
    reason: str = "turn",
    padding: int = 0,
) -> SaluteReport:
    """The SALUTE report a unit writes at the end of ``snapshot.turn``.

    ``padding`` lengthens ``activity.current_task`` so that reports differ in size.
    """
    if when is None:
        when = datetime.now(timezone.utc)
    elif not isinstance(when, datetime):
        when = datetime.fromtimestamp(when, timezone.utc)
    return SaluteReport.model_validate({
        "reason": reason,
        "status": {"state": state, "pace_level": snapshot.pace_level or "primary", "health": health},
        "activity": {"current_task": "codegen work" + "." * padding},
        "unit": {
            "unit_id": unit, "role_id": ROLE.role_id, "role_name": ROLE.role_name, "role_type": ROLE.role_type,
            "reports_to": ROLE.chain_of_command.reports_to, "organization": "software_dev",
        },
        "time": {"timestamp": when, "turns_elapsed": snapshot.turn, "turns_since_progress": snapshot.turns_since_progress or 0},
        "environment": {"context_fill_pct": round((snapshot.context_fill or 0) * 100, 1)},
        "signals": signals_from_snapshot(snapshot),
    })


def write_report(volume: Path | str, unit: str, report: SaluteReport) -> Path:
    """Write the unit's report atomically, as a unit does: sealed with its test report key."""
    path = VolumeLayout(volume).report(unit)
    body = report.model_dump_json(exclude={"signature"})
    atomic_write_text(path, seal_report(body, unit_key(unit)) + "\n")
    return path


def publish(
    volume: Path | str, unit: str, scenario: str, turn: int, unit_doctrine: Doctrine | None = None, **report_fields: Any,
) -> Path:
    """Write the report of ``scenario`` at ``turn`` for ``unit``; see :func:`report_for`."""
    return write_report(volume, unit, report_for(unit, scenario_snapshot(scenario, turn, unit_doctrine), **report_fields))


def message_files(volume: Path | str, unit: str) -> list[Path]:
    """Every steering file of the unit: waiting in the inbox, applied, or rejected."""
    layout = VolumeLayout(volume)
    files: list[Path] = []
    for folder in (layout.inbox(unit), layout.processed(unit), layout.rejected(unit)):
        if folder.is_dir():
            files.extend(p for p in folder.iterdir() if p.is_file() and p.suffix == ".json" and not p.name.startswith("."))
    return files


def messages(volume: Path | str, unit: str) -> list[dict[str, Any]]:
    """The steering messages of the unit (see :func:`message_files`), in seq order."""
    return sorted((json.loads(p.read_text(encoding="utf-8")) for p in message_files(volume, unit)), key=lambda m: m["seq"])


def acknowledge(volume: Path | str, unit: str, keep: Callable[[int], bool] = lambda seq: False) -> int:
    """Move inbox messages to ``processed/`` as a unit does after applying them, except
    those whose seq ``keep`` says to leave waiting. Returns how many moved."""
    layout = VolumeLayout(volume)
    inbox, processed = layout.inbox(unit), layout.processed(unit)
    moved = 0
    if not inbox.is_dir():
        return 0
    for path in inbox.iterdir():
        if path.is_file() and path.suffix == ".json" and not path.name.startswith("."):
            json.loads(path.read_text(encoding="utf-8"))  # a torn file would raise here
            if keep(int(path.name.split("-", 1)[0])):
                continue
            processed.mkdir(exist_ok=True)
            os.replace(path, processed / path.name)
            moved += 1
    return moved


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, interval: float = 0.02) -> Any:
    """Poll until ``predicate()`` is truthy; its value, or None after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def _steered_turn(volume: Path, unit: str, turn: int) -> bool:
    return any(m.get("report_turn") == turn for m in messages(volume, unit))


def _write_main(args: argparse.Namespace) -> int:
    """A unit: one report per turn; with --lockstep it waits for the XO's answer to each."""
    volume = Path(args.volume)
    unit_doctrine = doctrine(**json.loads(args.doctrine)) if args.doctrine else None
    for turn in range(args.start, args.start + args.turns):
        publish(volume, args.unit, args.scenario, turn, unit_doctrine, padding=args.padding + (turn * 97) % 2000)
        if args.lockstep and not wait_for(lambda turn=turn: _steered_turn(volume, args.unit, turn), timeout=args.timeout):
            print(f"{args.unit}: no steering for turn {turn} within {args.timeout} s", file=sys.stderr)
            return 1
        if args.ack:
            acknowledge(volume, args.unit, keep=lambda seq: seq % 2 == 0)
        time.sleep(args.interval)
    print(f"{args.unit}: wrote turns {args.start}..{args.start + args.turns - 1}")
    return 0


def _read_main(args: argparse.Namespace) -> int:
    """Read a report over and over; prints reads and torn (unusable) reads as JSON."""
    path = Path(args.path)
    reads = torn = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        try:
            read_report(path)
            reads += 1
        except FileNotFoundError:
            continue
        except FileRefused as exc:
            torn += 1
            if torn <= 3:
                print(exc, file=sys.stderr)
    print(json.dumps({"reads": reads, "torn": torn}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="act as a unit writing one report per turn")
    w.add_argument("--volume", required=True)
    w.add_argument("--unit", required=True)
    w.add_argument("--scenario", choices=sorted(SCENARIOS), default="stall")
    w.add_argument("--turns", type=int, default=20)
    w.add_argument("--start", type=int, default=1)
    w.add_argument("--interval", type=float, default=0.01, help="seconds between turns")
    w.add_argument("--doctrine", help="JSON object of doctrine changes, e.g. '{\"cooldown_turns\": 0}'")
    w.add_argument("--lockstep", action="store_true", help="wait for a steering about each turn before the next")
    w.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each steering with --lockstep")
    w.add_argument("--ack", action="store_true", help="move odd-numbered steering to processed/ as a unit would")
    w.add_argument("--padding", type=int, default=0, help="extra characters in each report, to make it bigger")
    w.set_defaults(func=_write_main)
    r = sub.add_parser("read", help="read a report over and over, counting torn reads")
    r.add_argument("--path", required=True)
    r.add_argument("--seconds", type=float, default=3.0)
    r.set_defaults(func=_read_main)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
