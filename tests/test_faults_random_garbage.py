"""Fault tests, source: random garbage (hypothesis) in every attribute and key that another
layer sets, and one field wrong in a changing way every turn.

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

import collections
import logging
from typing import Any, Callable

import pytest
from fault_kit import (
    CATCH_ALL,
    DEFAULT,
    LOGGER,
    LOOP_TEXT,
    MISSING_FILE,
    TOOL,
    Driver,
    assert_active,
    assert_logged_once,
    assert_valid_supervisor_state,
    ledger_size,
    set_attr,
    valid_role_dict,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from org.a0 import hooks
from org.contracts.common import PACE_LEVELS
from org.contracts.finding import SEVERITY_ORDER
from org.kernel.dispatcher import ROLE_ATTR
from org.kernel.log import forget_logged
from org.kernel.outcomes import FAILURES_KEY, LEDGER_KEY
from org.kernel.store import OrganizationStore
from org.supervisor.microcosm import STATE_KEY
from org.supervisor.steering import TAG, count_sentences

pytestmark = pytest.mark.usefixtures("fresh_store")


# =========================================================================== random garbage in every attribute and key

#: values that break numeric code: non-finite, beyond float range, bool-for-int, negative, empty
_EDGE_VALUES = [float("nan"), float("inf"), float("-inf"), 10**400, -(10**400), 2**63, -1, 0, True, False, "", "0", "nan", None]
_edge = st.sampled_from(_EDGE_VALUES)
_scalars = _edge | st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)
_tools = st.sampled_from([TOOL, "text_editor", "response", "unknown"])


def _near(shape: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """Dicts with the keys a layer expects, holding anything, some keys left out."""
    return st.fixed_dictionaries({}, optional=shape)


def _garbage(json_values: st.SearchStrategy, edge: st.SearchStrategy) -> dict[str, st.SearchStrategy]:
    """Per attribute or key: any JSON-like value, or the shape its layer writes with
    garbage inside (edge values weighted up where a number is read)."""
    j = json_values
    n = edge | j  # where the pack reads a number
    role = st.just(valid_role_dict())
    return {
        "_htn_state": _near({"turns_since_progress": n, "current_step": j, "plan_name": j, "plan_id": j}) | j,
        "_bst_store": _near({"__bst_belief_state__": _near({"domain": st.sampled_from(["debugging", "coding", "research"]) | j, "confidence": n}) | j}) | j,
        "_org_active_role": j | role | role.flatmap(lambda r: j.map(lambda v: {**r, "doctrine": v})),
        "_org_pace_level": j | st.sampled_from(list(PACE_LEVELS)),
        "_error_diagnosis": j | _near({"tool": j | _tools, "error_class": j}),
        "data:_tool_failures": _near({"consecutive": st.dictionaries(_tools, n, max_size=3) | j,
                                      "history": st.lists(_near({"tool": _tools | j, "error_type": j, "message_preview": j}) | j, max_size=5) | j}) | j,
        "data:_org_tool_ledger": j,
        "data:org_supervisor": _near({"version": j, "turn": n, "injections": n, "last_fired": st.dictionaries(st.sampled_from(["loop", "stall", "pace"]), n, max_size=3) | j,
                                      "last_severity": st.dictionaries(st.sampled_from(["loop", "stall", "pace"]), st.sampled_from(list(SEVERITY_ORDER)) | j, max_size=3) | j,
                                      "episode": st.dictionaries(st.sampled_from(["loop", "stall"]), n, max_size=2) | j}) | j,
        "data:ctx_window": _near({"tokens": n, "text": j}) | j,
    }


#: when each kind of garbage is put on the agent: before the dispatcher, after it
#: (someone else between dispatcher and supervisor) or just before the supervisor
#: steering kinds a radio check can inject in one turn, one each at most
ANOMALY_TYPES = ("stall", "loop", "churn", "rerun", "context", "cascade", "pace")
_WHEN = {"_org_active_role": "after_dispatch", "_org_pace_level": "after_dispatch", "_error_diagnosis": "after_dispatch",
         "data:_org_tool_ledger": "before_end"}


def _turn_plans(json_values: st.SearchStrategy, edge: st.SearchStrategy) -> st.SearchStrategy:
    one_turn = st.fixed_dictionaries({}, optional=_garbage(json_values, edge))
    return st.lists(st.tuples(one_turn, st.booleans()), min_size=1, max_size=4)


def _apply(garbage: dict[str, Any], when: str) -> Callable[[Any], None]:
    def put(agent: Any) -> None:
        for name, value in garbage.items():
            if _WHEN.get(name, "before") != when:
                continue
            if name.startswith("data:"):
                agent.data[name[5:]] = value
            else:
                setattr(agent, name, value)

    return put


def _run_garbage_session(plans: list[tuple[dict[str, Any], bool]]) -> tuple[Driver, list[list[str]]]:
    forget_logged()
    hooks.store = OrganizationStore()
    driver = Driver()
    per_turn: list[list[str]] = []
    for garbage, failing in plans:
        supervisor_before = driver.agent.data.get(STATE_KEY)
        warnings = driver.turn(TOOL, {"p": 1} if failing else DEFAULT, MISSING_FILE if failing else "done",
                               before=_apply(garbage, "before"), after_dispatch=_apply(garbage, "after_dispatch"),
                               before_end=_apply(garbage, "before_end"))
        per_turn.append(warnings)
        # supervisor invariants: at most one steering per anomaly type a turn, in the house style
        assert len(warnings) == len(set(warnings)) <= len(ANOMALY_TYPES), warnings
        for text in warnings:
            assert text.startswith(TAG) and count_sentences(text) <= 3, text
        state = driver.agent.data.get(STATE_KEY)
        if state is not supervisor_before and state is not garbage.get(f"data:{STATE_KEY}"):
            assert_valid_supervisor_state(state)
    return driver, per_turn


def _recovers(driver: Driver) -> None:
    """The garbage stops (the other layers clean up): the pack works normally again."""
    agent = driver.agent
    for name in ("_htn_state", "_bst_store", "_error_diagnosis"):
        agent.__dict__.pop(name, None)
    for key in (FAILURES_KEY, LEDGER_KEY, STATE_KEY, "ctx_window"):
        agent.data.pop(key, None)
    before = len(agent.history)
    for n in range(3):
        driver.turn(TOOL, {"recover": 1}, MISSING_FILE)
        assert_active(agent)
        assert ledger_size(agent) == n + 1
        assert agent.data[STATE_KEY]["turn"] == n + 1
    assert any(m.kind == "warning" and m.content["system_warning"].startswith(LOOP_TEXT) for m in agent.history[before:])


# 90 random sessions, each up to 4 garbage turns and 3 recovery turns (about 0.1 s with a fresh
# organization cache), ints beyond float range (10**400) included: they are rejected where they
# are read (org/kernel/values.py plain_number), not by the hooks' catch-all. Every session is
# checked for both properties at once; hypothesis's database (.hypothesis/) replays earlier
# failures first.
GARBAGE_SETTINGS = settings(max_examples=90, deadline=None,
                            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@GARBAGE_SETTINGS
@given(plans=_turn_plans(_json, _edge))
def test_random_garbage_never_escapes_is_handled_where_it_is_read_and_logged_once(home, plans):
    """The supervisor keeps its invariants every turn (_run_garbage_session), nothing reaches
    the hooks' catch-all, no message is logged twice, and the pack recovers."""
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Collect()
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    try:
        driver, _ = _run_garbage_session(plans)
    finally:
        logger.removeHandler(handler)
    caught = [m for m in records if CATCH_ALL in m]
    assert not caught, caught
    repeated = [m for m, n in collections.Counter(records).items() if n > 1]
    assert not repeated, repeated
    _recovers(driver)


# =========================================================================== the same problem, a changing value


@pytest.mark.parametrize("attr,values,fragment", [
    ("_htn_state", [{"turns_since_progress": str(n)} for n in range(6)], "agent._htn_state.turns_since_progress"),
    ("_bst_store", [{"__bst_belief_state__": {"domain": n}} for n in range(6)], "agent._bst_store['__bst_belief_state__'].domain"),
], ids=["htn_turns_as_text", "bst_domain_as_number"])
def test_a_field_wrong_the_same_way_every_turn_is_logged_once(home, caplog, attr, values, fragment):
    """The messages quote the offending value, but warn_once() de-duplicates on a stable key
    per field: a layer that keeps writing the same wrong kind of value (turns as text: '1',
    '2', '3', ...) gets the problem logged once, not once a turn."""
    driver = Driver()
    for value in values:
        driver.turn(before=set_attr(attr, value))
    assert getattr(driver.agent, ROLE_ATTR)["role_id"] == "codegen"  # the pack went on working
    assert_logged_once(caplog, fragment)
