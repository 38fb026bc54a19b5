"""The LLM-backed supervisors in the event log: each run (tokens, cost, outcome) and each
directive the agent marked done; ``a0org events --unit`` and the supervisors' rows in stats."""

from __future__ import annotations

from test_llm_supervisors import (  # noqa: F401  (fixtures)
    _active_organization,
    code_style,
    home,
    respond,
    seed_hand_written_convention,
    turns,
    write_config,
)

from org.kernel import events
from org.llm_supervisors.runner import runner_for
from org.standin.session import StandInSession
from org.stats import events_main, render, stats


def test_a_supervisor_run_and_a_directive_marked_done_are_events(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)  # not a bootstrap: the cleanup directive is kept
    write_config(home, llm_server, code_style={"every_tasks": 1})
    llm_server.script(code_style())
    session = StandInSession()
    session.run_task("write the tools", turns(respond()))
    runner_for(home).wait_for_runs()
    session.run_task("tidy up", turns(respond("Replaced the bare exceptions. [done D1]")))

    log = list(events.read(home))
    [run] = [e for e in log if e.type == "supervisor_run"]
    assert (run.supervisor, run.outcome) == ("code_style", "applied")
    assert run.tokens and run.tokens > 0 and run.cost_usd == 0.0021
    [done] = [e for e in log if e.type == "directive_done"]
    assert done.directive == "D1"

    figures = stats(log, llm={"total": {"runs": 1, "prompt_tokens": 100, "completion_tokens": 20, "cost_usd": 0.0021},
                              "by_supervisor": {"code_style": {"runs": 1, "prompt_tokens": 100, "completion_tokens": 20,
                                                               "cost_usd": 0.0021}}})
    assert figures["total"]["directives_done"] == 1
    text = render(figures)
    assert "directives marked done 1" in text and "code_style           1      120 $  0.0021" in text


def test_events_of_one_unit(tmp_path, capsys):
    events.record(tmp_path, ("steering", {"unit": "alpha", "anomaly": "loop", "turn": 3}),
                  ("relay", {"unit": "bravo", "sources": ["alpha"], "turn": 4}))
    assert events_main(tmp_path, None, None, None, False, False, unit="bravo") == 0
    [line] = capsys.readouterr().out.splitlines()
    assert "relay" in line and "bravo" in line and "learnings from alpha" in line
