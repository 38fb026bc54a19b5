#!/usr/bin/env python
"""The learning relay's figures: latency from a learning to another unit's history, duplicates,
wrong recipients, and what the relay adds to a full XO sweep of 1,000 units.

    python bench/relay.py [--rounds N] [--quick]

Prints one JSON object per line, as ``bench/run.py`` does. Latency: an XO process (native
file-system events) and unit processes running the pack's real hooks in the stand-in
Agent-Zero (``tests/relay_unit.py``): four units run pytest, one runs npm; then a unit finds
out that ``pytest`` is not on PATH and ``python -m pytest`` works. Measured from the end of
that unit's turn (its report is out) to the moment each other unit's history holds the
information, which the unit checks after each of its turns (about 20 turns a second): a
unit's next prompt. Never asserts on a timing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for entry in (str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from run import emit, percentile, r  # noqa: E402
from test_learning_relay import unit_env  # noqa: E402
from test_xo_processes import Processes  # noqa: E402
from volume_units import message_files, report_for, scenario_snapshot, seal_report, test_home, unit_key, wait_for  # noqa: E402

from org.contracts import SteeringMessage  # noqa: E402
from org.contracts.learning import Learning  # noqa: E402
from org.macrocosm.publishing import report_text  # noqa: E402
from org.macrocosm.volume import VolumeLayout  # noqa: E402
from org.macrocosm.xo import XO  # noqa: E402

RECIPIENTS = ("bravo", "charlie", "delta", "echo")
BYSTANDER = "foxtrot"
LEARNER = "alpha"


def _unit(procs: Processes, volume: Path, tmp: Path, unit: str, work: str, seconds: float) -> tuple[subprocess.Popen, Path]:
    out = tmp / f"{unit}.json"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "relay_unit.py"), "--org-home", str(tmp / "orgs" / unit), "--work", work,
         "--seconds", str(seconds), "--out", str(out)],
        cwd=ROOT, env=unit_env(procs, volume, unit, tmp), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs.started.append(process)
    return process, out


def one_round(tmp: Path) -> dict:
    procs = Processes(tmp)
    volume = tmp / "volume"
    volume.mkdir()
    try:
        procs.xo(volume, "--relay-interval", "0")
        waiting = {u: _unit(procs, volume, tmp, u, "pytest", 60) for u in RECIPIENTS}
        waiting[BYSTANDER] = _unit(procs, volume, tmp, BYSTANDER, "other", 5)
        wait_for(lambda: all((volume / "units" / u / "salute.json").exists() for u in waiting), 120)
        learner, learner_out = _unit(procs, volume, tmp, LEARNER, "learns", 2)
        for process, _ in [*waiting.values(), (learner, learner_out)]:
            process.wait(timeout=120)
        worked_at = json.loads(learner_out.read_text())["worked_at"]
        got = {u: json.loads(out.read_text()) for u, (_, out) in waiting.items()}
        informs = {u: sum(SteeringMessage.model_validate_json(p.read_text()).kind == "inform" for p in message_files(volume, u))
                   for u in [*waiting, LEARNER]}
        return {
            "latencies": [min(got[u]["information"].values()) - worked_at for u in RECIPIENTS if got[u]["information"]],
            "missed": sum(not got[u]["information"] for u in RECIPIENTS),
            "duplicates": sum(max(0, informs[u] - 1) for u in RECIPIENTS) + sum(max(0, len(got[u]["information"]) - 1) for u in RECIPIENTS),
            "wrong": informs[BYSTANDER] + informs[LEARNER],
        }
    finally:
        procs.stop_all()


def sweep_cost(units: int, repeats: int) -> dict[str, float]:
    """A full sweep of ``units`` fresh reports (ms, median): relay ``off``; ``on`` with every
    report carrying a learning that 9 other units (those using the same program) want, so
    every unit is sent a message; ``unwanted``: learnings nobody else wants (the matching alone)."""
    times: dict[str, list[float]] = {"off": [], "on": [], "unwanted": []}
    for repeat in range(repeats):
        for variant in (("off", "on", "unwanted") if repeat % 2 else ("unwanted", "on", "off")):
            with tempfile.TemporaryDirectory(prefix="a0org-relay-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as folder:
                layout = VolumeLayout(Path(folder))
                for n in range(units):
                    unit = f"unit-{n:02d}" if n < 64 else f"u{n}"
                    report = report_for(unit, scenario_snapshot("healthy", 5))
                    program = f"tool{n % (units // 10)}"
                    report.signals.outcomes = [o.model_copy(update={"command": f"{program} --check"}) for o in report.signals.outcomes]
                    learning = Learning(kind="command_fix", text=f"`{program} x` fails; `python -m {program} x` works",
                                        digest=f"{n:016x}", turn=5, programs=[program if variant == "on" else f"other{n}"])
                    report.signals.learnings = [learning]
                    folder_of = layout.units_dir / unit
                    folder_of.mkdir(parents=True)
                    (folder_of / "salute.json").write_text(seal_report(report_text(report).rstrip("\n"), unit_key(unit)) + "\n")
                xo = XO(layout, "engineering_xo", test_home(), relay_interval=None if variant == "off" else 300.0)
                start = time.perf_counter()
                xo.sweep()
                times[variant].append((time.perf_counter() - start) * 1000)
    return {variant: statistics.median(values) for variant, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    latencies, missed, duplicates, wrong = [], 0, 0, 0
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="a0org-relay-") as tmp:
            result = one_round(Path(tmp))
        latencies += result["latencies"]
        missed += result["missed"]
        duplicates += result["duplicates"]
        wrong += result["wrong"]
    emit("relay_latency_p50_ms", r(statistics.median(latencies) * 1000) if latencies else None, "ms",
         what="a learning's report -> another unit's history (its next prompt), native events", samples=len(latencies))
    emit("relay_latency_p99_ms", r(percentile(latencies, 99) * 1000) if latencies else None, "ms", samples=len(latencies))
    emit("relay_latency_max_ms", r(max(latencies) * 1000) if latencies else None, "ms", samples=len(latencies))
    emit("relay_missed", missed, "recipients", what=f"recipients that never got it, of {rounds * len(RECIPIENTS)}")
    emit("relay_duplicates", duplicates, "messages", what="messages or history entries beyond the first per recipient")
    emit("relay_wrong_recipients", wrong, "messages", what="messages to the unit that learned it or to a unit on other work")
    sweep = sweep_cost(200 if args.quick else 1000, 1 if args.quick else 5)
    off = sweep["off"]
    emit("relay_sweep_off_ms", r(off), "ms", what="full sweep of 1,000 fresh reports (tmpfs), relay off")
    emit("relay_sweep_unwanted_ms", r(sweep["unwanted"]), "ms", baseline=r(off), ratio=r(sweep["unwanted"] / off),
         what="the same, each report carrying a learning nobody else wants: finding recipients alone")
    emit("relay_sweep_on_ms", r(sweep["on"]), "ms", baseline=r(off), ratio=r(sweep["on"] / off),
         what="the same, each report carrying a learning 9 other units want: every unit is sent one signed message")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
