"""Fault tests, source: Agent-Zero's own objects misbehaving (the history, the agent,
``agent.data``, the UI log, the context, the loop data).

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

import asyncio

import pytest
from fault_kit import (
    LOOP_TEXT,
    MISSING_FILE,
    TOOL,
    Driver,
    Opaque,
    Raising,
    a0org_messages,
    assert_active,
    assert_logged_once,
    assert_no_catch_all,
    assert_no_duplicate_messages,
    ledger_size,
    logged,
    report,
)

from org.a0 import hooks
from org.standin.agent import LoopData
from org.supervisor.microcosm import STATE_KEY
from org.supervisor.steering import TAG

pytestmark = pytest.mark.usefixtures("fresh_store")


# =========================================================================== Agent-Zero objects misbehaving


def lock_history(agent) -> dict[str, bool]:
    """Make ``agent.hist_add_warning`` raise while the returned switch's "on" is true."""
    real = agent.hist_add_warning
    broken = {"on": True}

    def hist_add_warning(message, id=""):
        if broken["on"]:
            raise RuntimeError("history is locked")
        return real(message, id)

    agent.hist_add_warning = hist_add_warning
    return broken


def test_hist_add_warning_raising_never_escapes_and_the_agent_goes_on(home, caplog):
    driver = Driver()
    broken = lock_history(driver.agent)
    driver.fail(3)  # the loop steering fails to go in
    driver.fail(3)
    assert_logged_once(caplog, "agent.hist_add_warning", "RuntimeError: history is locked", "the loop steering was not injected")
    assert_no_catch_all(caplog)
    assert driver.agent.data[STATE_KEY]["injections"] == 0
    assert_active(driver.agent)
    assert driver.agent.data[STATE_KEY]["turn"] == 6  # the supervisor kept running
    broken["on"] = False
    warnings = driver.fail(4)
    assert_active(driver.agent)
    assert any(w.startswith(TAG) for w in warnings)  # steering goes in again once the history works


def test_async_hist_add_warning_failing_never_escapes(home, caplog):
    driver = Driver()

    async def hist_add_warning(message, id=""):
        raise RuntimeError("async history is locked")

    driver.agent.hist_add_warning = hist_add_warning
    driver.fail(5)
    assert_active(driver.agent)
    assert_logged_once(caplog, "agent.hist_add_warning", "RuntimeError: async history is locked")
    assert_no_catch_all(caplog)


def test_steering_that_could_not_be_injected_is_not_counted_or_cooled_down(home):
    """Regression: an injection that failed was counted and started its cooldown."""
    driver = Driver()
    broken = lock_history(driver.agent)
    driver.fail(3)  # turn 3: the loop is found, injecting fails
    assert driver.agent.data[STATE_KEY]["injections"] == 0
    broken["on"] = False
    warnings = driver.fail(1)  # turn 4: still looping, and nothing was delivered yet
    assert any(w.startswith(TAG) for w in warnings), "the loop steering was lost"


@pytest.mark.parametrize("agent", [None, "agent0", 0, Opaque(), Raising()], ids=["none", "text", "int", "opaque", "raising"])
def test_hooks_never_raise_for_something_that_is_not_an_agent(home, caplog, agent):
    for _ in range(3):
        assert hooks.before_main_llm_call(agent, loop_data=None) is None
        assert hooks.tool_execute_after(agent, response=None, tool_name=None) is None
        assert asyncio.run(hooks.message_loop_end(agent, loop_data=None)) is None
    assert_no_duplicate_messages(caplog)


@pytest.mark.parametrize("data", [None, "data", [], Raising()], ids=["none", "text", "list", "raising"])
def test_agent_data_that_is_not_a_dict_never_escapes(home, caplog, data):
    driver = Driver()
    driver.agent.data = data
    for _ in range(3):
        driver.turn(TOOL, {"p": 1}, MISSING_FILE)
    assert len(logged(caplog, "org dispatcher")) <= 1  # once, however many turns
    driver.agent.data = {}
    warnings = driver.fail(3)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)


def test_ui_log_raising_does_not_stop_the_steering(home, caplog):
    driver = Driver()

    def log(**kwargs):
        raise RuntimeError("UI is gone")

    driver.agent.context.log.log = log
    warnings = driver.fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert driver.agent.data[STATE_KEY]["injections"] == 1
    assert a0org_messages(caplog) == []  # a UI problem is not the user's problem


@pytest.mark.parametrize("context", ["missing", "none", "no_log"])
def test_missing_or_broken_context_does_not_stop_the_pack(home, caplog, context):
    driver = Driver()
    agent = driver.agent
    if context == "missing":
        del agent.context
    elif context == "none":
        agent.context = None
    else:
        agent.context = Opaque()
    warnings = driver.fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert report(home).unit.context_id is None
    assert_no_catch_all(caplog)


def test_context_whose_attributes_raise_never_escapes(home, caplog):
    driver = Driver()
    driver.agent.context = Raising()
    warnings = driver.fail(3)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)  # compat.ui_log absorbs it for the supervisor


def test_context_whose_attributes_raise_does_not_cost_the_salute_report(home, caplog):
    """Regression: a raising context.id aborted the dispatcher before the report was written."""
    driver = Driver()
    driver.agent.context = Raising()
    driver.turn()
    assert_no_catch_all(caplog)
    assert report(home).unit.context_id is None


@pytest.mark.parametrize("loop_data", [None, "loop", 5, Opaque(), LoopData(iteration="x", last_response=None, params_persistent="p")],
                         ids=["none", "text", "int", "no_attributes", "wrong_attribute_types"])
def test_missing_or_odd_loop_data_does_not_stop_the_pack(home, caplog, loop_data):
    driver = Driver()
    warnings = driver.fail(3, loop_data=loop_data)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert ledger_size(driver.agent) == 3
    assert_no_catch_all(caplog)


def test_agent_without_loop_data_records_outcomes_without_arguments(home, caplog):
    driver = Driver()
    del driver.agent.loop_data
    for _ in range(3):
        driver.turn(TOOL, output=MISSING_FILE, loop_data=None)
    assert ledger_size(driver.agent) == 3
    assert any(w.startswith(LOOP_TEXT) for w in driver.agent.warnings())
    assert_no_catch_all(caplog)


