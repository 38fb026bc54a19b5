"""bench/run.py --baseline-tree: another tree's bench run right after, in its own process and
with its own code, and each per-turn figure printed beside it as a ratio."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from bench.run import COMPARED, compare_with_baseline


def tree_printing(tmp_path: Path, body: str) -> Path:
    tree = tmp_path / "baseline"
    (tree / "bench").mkdir(parents=True)
    (tree / "bench" / "run.py").write_text(textwrap.dedent(body))
    return tree


def records(capsys) -> dict[str, dict]:
    return {r["name"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}


def test_each_per_turn_figure_is_printed_with_the_baseline_tree_s_and_their_ratio(tmp_path, capsys):
    tree = tree_printing(tmp_path, """
        import json, os, sys
        print("a line that is not a figure")
        # its own code comes first on the path, whatever is installed
        assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == os.getcwd(), os.environ["PYTHONPATH"]
        for name, value in (("active_hook_turn_us", 200.0), ("active_radio_check_us", 50.0), ("idle_hook_supervisor_us", 2.0)):
            print(json.dumps({"name": name, "value": value, "unit": "us"}))
        print(json.dumps({"name": "quick", "value": "--quick" in sys.argv, "unit": ""}))
    """)
    compare_with_baseline(tree, True, {"active_hook_turn_us": 650.0, "active_radio_check_us": 345.0, "active_hook_turn_quiet_us": 150.0})
    got = records(capsys)
    assert set(got) == {"active_hook_turn_us_vs_baseline", "active_radio_check_us_vs_baseline"}  # a figure either side lacks is left out
    turn = got["active_hook_turn_us_vs_baseline"]
    assert (turn["value"], turn["this"], turn["baseline"], turn["baseline_tree"]) == (3.25, 650.0, 200.0, str(tree))
    assert "active_hook_turn_us" in COMPARED and "active_hook_turn_quiet_us" in COMPARED


def test_a_baseline_tree_whose_bench_fails_is_reported_not_compared(tmp_path, capsys):
    tree = tree_printing(tmp_path, """
        import sys
        sys.exit("ModuleNotFoundError: No module named 'org.kernel.report'")
    """)
    compare_with_baseline(tree, False, {"active_hook_turn_us": 650.0})
    [(name, record)] = records(capsys).items()
    assert name == "baseline_tree_failed" and record["value"] == 1 and "org.kernel.report" in record["stderr"]


def test_rounds_run_the_two_trees_in_turns_and_compare_their_medians(tmp_path, capsys):
    order = tmp_path / "order.txt"
    def tree(name: str, hook_turn: float) -> Path:
        root = tmp_path / name
        (root / "bench").mkdir(parents=True)
        (root / "bench" / "run.py").write_text(textwrap.dedent(f"""
            import json
            with open({str(order)!r}, "a") as log:
                log.write({name!r} + "\\n")
            print(json.dumps({{"name": "active_hook_turn_us", "value": {hook_turn}, "unit": "us"}}))
        """))
        return root
    baseline, this = tree("baseline", 200.0), tree("this", 400.0)
    compare_with_baseline(baseline, True, {"active_hook_turn_us": 650.0}, rounds=3, this_tree=this)
    # this run was the first of this tree's: then the baseline, this tree, the baseline, this tree, the baseline
    assert order.read_text().split() == ["baseline", "this", "baseline", "this", "baseline"]
    [(name, record)] = records(capsys).items()
    assert name == "active_hook_turn_us_vs_baseline" and record["rounds"] == 3
    assert (record["this"], record["baseline"], record["value"]) == (400.0, 200.0, 2.0)  # medians of 650, 400, 400 and of 200s
    assert record["round_ratios"] == [3.25, 2.0, 2.0]


def test_the_troubled_scenario_finds_every_anomaly_its_turns_are_timed_on(org_home):
    """The figures with findings are only that while the scenario holds them: its histories
    are made turn by turn, one call a turn, as Agent-Zero's loop makes them."""
    from bench import run as bench
    from org.contracts import TraceHeader
    from org.replay import prepare_organization
    from org.standin.session import model_config_plugin

    prepare_organization(org_home, TraceHeader(kind="header", role="codegen", doctrine={
        "radio_check_interval_turns": 1, "escalation": {"pause": False, "pause_after_emergency": False}}))
    agent = bench.new_agent()
    with model_config_plugin(agent.ctx_length):
        bench.fill_troubled_agent(agent)
        result = bench.radio_check_once(agent, agent.loop_data)
    assert sorted({f.anomaly for f in result.findings}) == ["cascade", "churn", "context", "loop", "pace", "stall"]
    turns = [o.turn for o in agent.data["_org_tool_ledger"].outcomes]
    assert len(set(turns)) == len(turns)
