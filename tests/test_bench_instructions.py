"""bench/instructions.py: instructions per hook turn, counted by valgrind, for this tree and another."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.instructions import SCENARIOS, callgrind_total, main

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "instructions.py"


def test_a_count_is_the_total_callgrind_gives_the_whole_run(tmp_path):
    out = tmp_path / "callgrind.out"
    out.write_text("# callgrind format\nversion: 1\ncmd: python\nevents: Ir\nfl=(1) a.c\nfn=(1) main\n16 3\nsummary: 2373535300\ntotals: 2373535300\n")
    assert callgrind_total(out) == 2373535300
    out.write_text("events: Ir\n")
    try:
        callgrind_total(out)
    except ValueError as exc:
        assert "no summary line" in str(exc)
    else:
        raise AssertionError("a file without a total was read as one")


def test_each_scenario_runs_its_turns_in_the_tree_it_is_given(tmp_path):
    for scenario in SCENARIOS.values():
        done = subprocess.run([sys.executable, str(SCRIPT), "--child", str(ROOT), scenario, "3"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Traceback" not in done.stderr


def test_without_valgrind_it_says_so_and_counts_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no valgrind on it
    assert main([]) == 0
    [record] = map(json.loads, capsys.readouterr().out.splitlines())
    assert record["name"] == "instructions_skipped" and "valgrind" in record["reason"]
