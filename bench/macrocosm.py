#!/usr/bin/env python
"""Benchmarks for the macrocosm: XO sweeps, report-to-steering latency, memory, the unit's inbox check.

``python bench/macrocosm.py`` prints one JSON object per line, as ``bench/run.py`` does
(``name``, ``value``, ``unit``; ``target``/``met`` beside a figure that has a target;
``baseline``/``ratio`` where a figure is compared with one measured in the same run).
``--quick`` uses smaller counts (a smoke check). What each figure means: bench/README.md.
The script never asserts on a timing; it only reports.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
for entry in (str(ROOT), str(Path(__file__).resolve().parent)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from run import NOOP_HOOK, emit, percentile, r, temp_root, time_batch, with_target  # noqa: E402

from org.contracts import RoleProfile, SaluteReport  # noqa: E402
from org.kernel import loading  # noqa: E402
from org.kernel.files import atomic_write_text  # noqa: E402
from org.kernel.log import forget_logged, logger  # noqa: E402
from org.kernel.outcomes import ToolOutcome  # noqa: E402
from org.macrocosm import keys as macro_keys  # noqa: E402
from org.macrocosm.publishing import report_text  # noqa: E402
from org.macrocosm.signing import LEGACY_ENV_KEY as ENV_KEY  # noqa: E402
from org.macrocosm.signing import LEGACY_ENV_KEY_FILE as ENV_KEY_FILE  # noqa: E402
from org.macrocosm.signing import seal_report, unit_key_from  # noqa: E402
from org.macrocosm.volume import ENV_UNIT, ENV_VOLUME, VolumeLayout  # noqa: E402
from org.macrocosm.xo import XO  # noqa: E402
from org.resources import extensions_dir, roles_dir  # noqa: E402
from org.standin.agent import StandInAgent  # noqa: E402
from org.standin.loader import call_point, load_point  # noqa: E402
from org.supervisor.signals import signals_from_snapshot  # noqa: E402
from org.supervisor.snapshot import Snapshot  # noqa: E402

SWEEP_TARGET_MS = 100.0  # a full sweep of 1,000 units
SWEEP_TARGET_UNITS = 1_000
LATENCY_TARGET_P99_MS = 50.0  # report written -> steering file in the inbox, native events
XO_ROLE = "engineering_xo"
INBOX_POINT = "message_loop_prompts_before"
ERA = "D"

ROLE = loading.load(RoleProfile, roles_dir() / "codegen.yaml")
INTERVAL = ROLE.doctrine.radio_check_interval_turns


class Config:
    def __init__(self, quick: bool):
        self.quick = quick
        self.sweep_units = (200, 1_000) if quick else (1_000, 10_000)
        self.sweep_repeats = 3 if quick else 5
        #: the same sweep on a disk, where the XO's store and every steering file cost a sync
        self.disk_sweep_units = (200,) if quick else (1_000,)
        self.disk_sweep_repeats = 2
        self.latency_samples = 40 if quick else 300
        #: seconds between two trigger reports (random in this range; overlapping is allowed)
        self.latency_gap = (0.02, 0.06)
        self.poll_interval = 1.0  # the daemon's default
        self.inbox_iterations = 1_000 if quick else 5_000
        self.inbox_repeats = 5 if quick else 15


# --------------------------------------------------------------------------- reports


class Reports:
    """SALUTE reports of the codegen role as a unit publishes them, fast to stamp out.

    One report per (turn, context fill) is built through the real contracts; each unit's
    copy only changes the unit id and the time.
    """

    def __init__(self) -> None:
        self._templates: dict[tuple[int, float], dict[str, Any]] = {}

    def template(self, turn: int, fill: float) -> dict[str, Any]:
        key = (turn, fill)
        if key not in self._templates:
            outcomes = tuple(
                ToolOutcome(max(0, turn - 12 + i), ("code_execution_tool", "text_editor")[i % 2], True, None, f"sig{turn}-{i}", f"out{turn}-{i}",
                            "ok", True)
                for i in range(12)
            )
            snapshot = Snapshot(
                turn=turn, role_id=ROLE.role_id, doctrine=ROLE.doctrine, pace_level="primary", pace_plan=ROLE.pace_plan,
                turns_since_progress=0, progress_source="pack", outcomes=outcomes, context_fill=fill,
            )
            report = SaluteReport.model_validate({
                "reason": "turn",
                "status": {"state": "active", "pace_level": "primary", "health": "nominal"},
                "activity": {"current_task": "write the parser", "current_tool": "text_editor"},
                "unit": {"unit_id": "unit", "role_id": ROLE.role_id, "role_name": ROLE.role_name, "role_type": ROLE.role_type,
                         "reports_to": XO_ROLE, "organization": "software_dev"},
                "time": {"timestamp": datetime.now(timezone.utc), "turns_elapsed": turn, "turns_since_progress": 0},
                "environment": {"context_fill_pct": fill},
                "signals": signals_from_snapshot(snapshot),
            })
            self._templates[key] = json.loads(report_text(report))  # as a unit publishes it
        return self._templates[key]

    def text(self, unit: str, turn: int, fill: float = 0.3) -> str:
        """The report as the unit writes it: compact JSON sealed with the unit's own key."""
        value = self.template(turn, fill)
        value["unit"]["unit_id"] = unit
        value["time"]["timestamp"] = datetime.now(timezone.utc).isoformat()
        value.pop("signature", None)
        return seal_report(json.dumps(value, separators=(",", ":")), bench_unit_key(unit))

    def write_all(self, layout: VolumeLayout, units: list[str], turn: int, fill: float = 0.3) -> None:
        """Set-up only (not measured): plain write and rename, no fsync."""
        for unit in units:
            path = layout.report(unit)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(".salute.json.tmp")
            tmp.write_text(self.text(unit, turn, fill), encoding="utf-8")
            os.replace(tmp, path)


def bench_unit_key(unit: str) -> bytes:
    return unit_key_from(hashlib.sha256(unit.encode()).hexdigest().encode(), unit)


def xo_home(scratch: Path, units: list[str]) -> Path:
    """An XO home as `a0org keys` makes it: a signing key, and every unit's report key registered."""
    folder = macro_keys.KeyFolder(scratch / f"keys-{len(units)}")
    if not (folder.xo_home / "signing" / "active").exists():
        macro_keys.init(folder)
    units_dir = folder.xo_home / "units"
    units_dir.mkdir(mode=0o700, exist_ok=True)
    for unit in units:
        path = units_dir / f"{unit}.key"
        path.write_text(bench_unit_key(unit).hex() + "\n")
        path.chmod(0o600)
    return folder.xo_home


def unit_ids(n: int, prefix: str = "unit") -> list[str]:
    return [f"{prefix}-{i:05d}" for i in range(n)]


@contextmanager
def quiet_log() -> Iterator[None]:
    """The XO logs a line per unit in some sweeps; at 10,000 units that would be the figure."""
    level = logger.level
    logger.setLevel("ERROR")
    try:
        yield
    finally:
        logger.setLevel(level)


# --------------------------------------------------------------------------- 1. sweeps


def timed_ms(action, cpu: list[float] | None = None) -> tuple[float, Any]:
    """Wall milliseconds of ``action()`` and its result; its CPU milliseconds appended to ``cpu``."""
    start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
    result = action()
    if cpu is not None:
        cpu.append((time.process_time_ns() - start_cpu) / 1e6)
    return (time.perf_counter_ns() - start) / 1e6, result


def bench_sweep(scratch: Path, reports: Reports, counts: tuple[int, ...], repeats: int, suffix: str = "") -> None:
    fs = fs_type(scratch)
    for n in counts:
        layout = VolumeLayout(scratch / f"sweep-{n}")
        units = unit_ids(n)
        turn = INTERVAL
        reports.write_all(layout, units, turn)
        xo = XO(layout, XO_ROLE, macro_keys.XOHome.load(xo_home(scratch, units)))  # signs steering, checks every seal
        with quiet_log():
            first_ms, _ = timed_ms(xo.sweep)
            full: list[float] = []
            full_cpu: list[float] = []
            quiet: list[float] = []
            for _ in range(repeats):
                turn += INTERVAL  # a check boundary crossed: every unit gets a radio check
                reports.write_all(layout, units, turn)
                ms, result = timed_ms(xo.sweep, full_cpu)
                assert result.checked == n, f"a full sweep must check every unit: {describe(result)}"
                full.append(ms)
                ms, _ = timed_ms(xo.sweep)
                quiet.append(ms)
        target = with_target(statistics.median(full), SWEEP_TARGET_MS) if n == SWEEP_TARGET_UNITS else {}
        common = {"units": n, "repeats": repeats, "scratch_fs": fs}
        emit(f"xo_sweep_full_{n}{suffix}_ms", r(statistics.median(full), 2), "ms", **target, **common,
             min=r(min(full), 2), max=r(max(full), 2), cpu_ms=r(statistics.median(full_cpu), 2),
             first_sweep_ms=r(first_ms, 2), result=describe(result),
             what="XO.sweep() when every unit's report is new (a radio check per unit)")
        emit(f"xo_sweep_quiet_{n}{suffix}_ms", r(statistics.median(quiet), 2), "ms", **common,
             min=r(min(quiet), 2), max=r(max(quiet), 2), per_unit_us=r(statistics.median(quiet) * 1000 / n, 2),
             what="XO.sweep() when no report changed (heartbeats only)")
        del xo
        shutil.rmtree(layout.root, ignore_errors=True)
        gc.collect()


def describe(result: Any) -> Any:
    """The sweep's own account of what it did, so the figure shows the work was real."""
    if result is None:
        return None
    if hasattr(result, "__dataclass_fields__"):
        out = {}
        for name in result.__dataclass_fields__:
            value = getattr(result, name)
            out[name] = len(value) if isinstance(value, (list, tuple, set, dict)) else value
        return out
    return repr(result)[:200]


# --------------------------------------------------------------------------- 2. latency


def inbox_has_message(inbox: Path) -> bool:
    try:
        with os.scandir(inbox) as entries:
            return any(e.name.endswith(".json") and not e.name.startswith(".") for e in entries)
    except OSError:
        return False


class XOProcess:
    """A real ``a0org xo`` process on the volume."""

    def __init__(self, volume: Path, scratch: Path, *extra: str, home: Path | None = None):
        self.log_path = scratch / f"xo-{volume.name}.log"
        env = {k: v for k, v in os.environ.items() if k not in (ENV_KEY, ENV_KEY_FILE)}
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "org", "xo", "--volume", str(volume), "--role", XO_ROLE,
             *(("--home", str(home)) if home else ("--insecure",)), *extra],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT,
        )

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode


def write_trigger(reports: Reports, layout: VolumeLayout, unit: str) -> None:
    """A report whose radio check steers: the next check turn, context 95% (context critical)."""
    atomic_write_text(layout.report(unit), reports.text(unit, 2 * INTERVAL, 0.95))


def measure_latency(cfg: Config, layout: VolumeLayout, units: list[str], reports: Reports, timeout: float) -> tuple[list[float], int]:
    """Trigger reports at random gaps (they may overlap); ms from each report's rename to its
    unit's first inbox file, with the inbox looked at every ~0.2 ms."""
    rng = random.Random(11)
    pending: dict[str, float] = {}
    latencies: list[float] = []
    queue = list(units)
    next_write = time.perf_counter()
    deadline = None
    while queue or pending:
        now = time.perf_counter()
        if queue and now >= next_write:
            unit = queue.pop()
            write_trigger(reports, layout, unit)
            pending[unit] = time.perf_counter()
            next_write = pending[unit] + rng.uniform(*cfg.latency_gap)
            if not queue:
                deadline = time.perf_counter() + timeout
        for unit in [u for u in pending if inbox_has_message(layout.inbox(u))]:
            latencies.append((time.perf_counter() - pending.pop(unit)) * 1000)
        if deadline is not None and time.perf_counter() > deadline:
            break
        time.sleep(0.0002)
    return latencies, len(pending)


def wait_ready(daemon: XOProcess, layout: VolumeLayout, reports: Reports, unit: str) -> None:
    """The first steering proves the daemon is up and watching; then let it settle."""
    write_trigger(reports, layout, unit)
    deadline = time.monotonic() + 60
    while not inbox_has_message(layout.inbox(unit)):
        if daemon.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the XO daemon did not steer the warm-up unit; its log:\n{daemon.log_tail()}")
        time.sleep(0.01)
    time.sleep(0.5)


def bench_latency(cfg: Config, scratch: Path, reports: Reports, polling: bool, suffix: str = "") -> None:
    mode = "polling" if polling else "native"
    layout = VolumeLayout(scratch / f"latency-{mode}")
    units = unit_ids(cfg.latency_samples)
    warm = "warm-up"
    reports.write_all(layout, units + [warm], INTERVAL)  # a first, healthy report each: checked, nothing to say
    extra = ("--polling", "--poll-interval", str(cfg.poll_interval)) if polling else ()
    daemon = XOProcess(layout.root, scratch, *extra, home=xo_home(scratch, units + [warm]))
    try:
        wait_ready(daemon, layout, reports, warm)
        latencies, lost = measure_latency(cfg, layout, units, reports, timeout=10 + 3 * cfg.poll_interval)
    finally:
        stopping = time.perf_counter()
        code = daemon.stop()
        stop_s = time.perf_counter() - stopping
    if not latencies:
        raise RuntimeError(f"no steering arrived ({mode}); the XO's log:\n{daemon.log_tail()}")
    p99 = percentile(latencies, 99)
    fields: dict[str, Any] = {
        "samples": len(latencies), "missing": lost, "p50": r(percentile(latencies, 50), 2), "p95": r(percentile(latencies, 95), 2),
        "p99": r(p99, 2), "max": r(max(latencies), 2), "scratch_fs": fs_type(scratch),
        "xo_exit_code": code, "xo_stop_seconds": r(stop_s, 2),
    }
    if code != 0:
        fields["xo_log_tail"] = daemon.log_tail()[-600:]
    if polling:
        fields["poll_interval_s"] = cfg.poll_interval
    else:
        fields.update(with_target(p99, LATENCY_TARGET_P99_MS))
        fields["target_applies_to"] = "p99"
    shutil.rmtree(layout.root, ignore_errors=True)
    emit(f"latency_report_to_steering_{mode}{suffix}_ms", fields["p50"], "ms", **fields,
         what=f"report renamed into place -> steering file in the inbox, a real `a0org xo` process ({mode})")


# --------------------------------------------------------------------------- 3. memory


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory_child(volume: str) -> int:
    """Run in a fresh interpreter: RSS before an XO exists and after its first full sweep."""
    layout = VolumeLayout(volume)
    gc.collect()
    before = rss_bytes()
    xo = XO(layout, XO_ROLE, None)
    with quiet_log():
        xo.sweep()
    gc.collect()
    print(json.dumps({"rss_delta": rss_bytes() - before, "units": len(layout.unit_ids()[0]), "alive": xo is not None}))
    return 0


def bench_memory(cfg: Config, scratch: Path, reports: Reports) -> None:
    for n in cfg.sweep_units:
        layout = VolumeLayout(scratch / f"memory-{n}")
        units = unit_ids(n)
        reports.write_all(layout, units, INTERVAL)
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        xo = XO(layout, XO_ROLE, None)
        with quiet_log():
            xo.sweep()
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        held -= baseline
        del xo
        shutil.rmtree(layout.xo_dir, ignore_errors=True)  # the child starts from the same clean volume
        child = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(layout.root)], cwd=ROOT, capture_output=True, text=True, check=False,
        )
        rss = json.loads(child.stdout.strip().splitlines()[-1])["rss_delta"] if child.returncode == 0 else None
        emit(f"xo_memory_per_unit_{n}_bytes", round(held / n), "bytes", units=n, tracemalloc_held_bytes=held,
             tracemalloc_peak_bytes=peak - baseline, rss_delta_per_unit_bytes=round(rss / n) if rss is not None else None,
             rss_delta_bytes=rss, child_error=None if child.returncode == 0 else child.stderr[-500:],
             what="memory the XO holds per unit after a full sweep (tracemalloc); RSS delta of a fresh process beside it")


# --------------------------------------------------------------------------- 4. the unit's inbox check


def set_environment(values: dict[str, str | None]) -> None:
    """Set each variable, or remove it where the value is None."""
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    try:
        set_environment(values)
        yield
    finally:
        set_environment(saved)


async def paired(cfg: Config, a: list, b: list, agent: Any) -> tuple[float, float, float]:
    """Median ns per call of hook lists ``a`` and ``b``, alternated, and the median paired difference b - a."""
    loop_data = agent.loop_data
    for classes in (a, b):
        await time_batch(classes, agent, loop_data, cfg.inbox_iterations // 4)
    a_ns: list[float] = []
    b_ns: list[float] = []
    for repeat in range(cfg.inbox_repeats):
        order = ((a, a_ns), (b, b_ns)) if repeat % 2 == 0 else ((b, b_ns), (a, a_ns))
        for classes, out in order:
            out.append(await time_batch(classes, agent, loop_data, cfg.inbox_iterations))
    return statistics.median(a_ns), statistics.median(b_ns), statistics.median([y - x for x, y in zip(a_ns, b_ns)])


async def bench_inbox(cfg: Config, scratch: Path) -> None:
    noop_dir = scratch / "noop-extensions"
    (noop_dir / INBOX_POINT).mkdir(parents=True)
    (noop_dir / INBOX_POINT / "_20_noop_inbox.py").write_text(NOOP_HOOK, encoding="utf-8")
    real = load_point([extensions_dir()], INBOX_POINT, ERA)
    noop = load_point([noop_dir], INBOX_POINT, ERA)
    assert [c.__name__ for c in noop] == ["NoopLoop"], noop
    assert len(real) == 1, real
    agent = StandInAgent(era=ERA)
    volume = scratch / "inbox-volume"
    layout = VolumeLayout(volume)
    layout.inbox("unit-1").mkdir(parents=True)
    common = {"repeats": cfg.inbox_repeats, "iterations": cfg.inbox_iterations}
    cases = (
        ("no_xo", {ENV_VOLUME: None, ENV_UNIT: None}, "no shared volume configured ($A0ORG_VOLUME unset)"),
        ("empty_inbox", {ENV_VOLUME: str(volume), ENV_UNIT: "unit-1"}, "linked to a volume, nothing in the inbox"),
    )
    for name, env, what in cases:
        with environment(**env, **{ENV_KEY: None, ENV_KEY_FILE: None}):
            await call_point(real, ERA, agent, loop_data=agent.loop_data)
            noop_ns, real_ns, diff_ns = await paired(cfg, noop, real, agent)
        emit(f"unit_inbox_check_{name}_us", r(real_ns / 1000), "us", baseline=r(noop_ns / 1000), ratio=r(real_ns / noop_ns, 2),
             overhead_us=r(diff_ns / 1000), **common,
             what=f"extensions/{INBOX_POINT}/{real[0].__module__}.py per turn, {what}; baseline: a no-op hook")


# --------------------------------------------------------------------------- main


def disk_root(scratch: Path, requested: str | None) -> Path | None:
    """The system temp folder for the disk figures, when the main scratch is on another file system."""
    if requested:
        return None
    disk = Path(tempfile.gettempdir())
    if fs_type(disk) == fs_type(scratch.parent):
        return None
    return Path(tempfile.mkdtemp(prefix="a0org-macrocosm-bench-", dir=disk))


def fs_type(path: Path) -> str:
    """The file system the scratch folder is on (from /proc/mounts; the longest mount point that holds it)."""
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts") as handle:
            for line in handle:
                parts = line.split()
                mount = parts[1]
                inside = str(path) == mount or str(path).startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best, kind = mount, parts[2]
    except OSError:
        pass
    return kind


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts: a smoke check")
    parser.add_argument("--tmp", help="folder for the scratch volumes (default: /dev/shm when present, plus the system temp folder for the _disk figures)")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        return memory_child(args.memory_child)
    cfg = Config(args.quick)
    started = time.perf_counter()
    scratch = temp_root(args.tmp)
    disk = disk_root(scratch, args.tmp)
    forget_logged()
    reports = Reports()
    try:
        bench_sweep(scratch, reports, cfg.sweep_units, cfg.sweep_repeats)
        if disk is not None:
            bench_sweep(disk, reports, cfg.disk_sweep_units, cfg.disk_sweep_repeats, suffix="_disk")
        bench_latency(cfg, scratch, reports, polling=False)
        if disk is not None:
            bench_latency(cfg, disk, reports, polling=False, suffix="_disk")
        bench_latency(cfg, scratch, reports, polling=True)
        bench_memory(cfg, scratch, reports)
        asyncio.run(bench_inbox(cfg, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if disk is not None:
            shutil.rmtree(disk, ignore_errors=True)
    emit("run_seconds", r(time.perf_counter() - started, 2), "s", quick=cfg.quick, python=platform.python_version(),
         cpus=os.cpu_count(), scratch=str(scratch.parent), scratch_fs=fs_type(scratch.parent),
         disk=str(disk.parent) if disk else None, disk_fs=fs_type(disk.parent) if disk else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
