"""Fault tests, source: what a tool call hands the pack (the response, the tool name, the
arguments).

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from fault_kit import (
    LOOP_TEXT,
    MISSING_FILE,
    TOOL,
    Driver,
    Opaque,
    assert_no_catch_all,
    last_outcome,
    ledger_size,
)

from org.kernel.outcomes import FAILURES_KEY, LEDGER_KEY

pytestmark = pytest.mark.usefixtures("fresh_store")


class Message:
    def __init__(self, message: Any):
        self.message = message


@pytest.mark.parametrize("response,expected_preview", [
    (None, None), (Message(None), None), (Message(12345), "12345"), (Message(b"bytes"), None), (Message({"a": [1]}), None),
    (Message(["a", "b"]), None), (Message(float("nan")), "nan"), ("a bare string", "a bare string"),
    (Message("x" * 5_000_000), "x" * 150),
], ids=["none", "message_none", "message_int", "message_bytes", "message_dict", "message_list", "message_nan",
        "bare_string", "huge_message"])
def test_odd_tool_responses_are_recorded(home, caplog, response, expected_preview):
    driver = Driver()
    driver.turn(TOOL, {"p": 1}, response=response)
    assert ledger_size(driver.agent) == 1
    outcome = last_outcome(driver.agent)
    assert outcome.tool == TOOL
    if expected_preview is not None:
        assert outcome.message_preview == expected_preview
    assert_no_catch_all(caplog)


class RaisingMessage:
    @property
    def message(self) -> str:
        raise RuntimeError("response already consumed")


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize("case", ["raising_message", "unprintable_message", "unprintable_argument"])
def test_unreadable_response_or_arguments_do_not_lose_the_outcome(home, caplog, case):
    """Regression: an unreadable response or unprintable arguments lost the outcome."""
    driver = Driver()
    if case == "raising_message":
        driver.turn(TOOL, {"p": 1}, response=RaisingMessage())
    elif case == "unprintable_message":
        driver.turn(TOOL, {"p": 1}, response=Message(Unprintable()))
    else:
        driver.turn(TOOL, {"p": Unprintable()}, "done")
    assert ledger_size(driver.agent) == 1
    assert_no_catch_all(caplog)


@pytest.mark.parametrize("tool_name", [None, "", 5, ["x"], Opaque()], ids=["none", "empty", "int", "list", "object"])
def test_missing_tool_name_is_recorded_as_unknown(home, caplog, tool_name):
    driver = Driver()
    driver.turn(TOOL, {"p": 1}, MISSING_FILE, tool_name=tool_name)
    assert ledger_size(driver.agent) == 1
    assert last_outcome(driver.agent).tool == "unknown"
    assert driver.agent.data[FAILURES_KEY]["history"][-1]["tool"] == "unknown"
    assert_no_catch_all(caplog)


def _circular() -> dict:
    args: dict = {"code": "ls"}
    args["self"] = args
    return args


SHARED_OBJECT = Opaque()


@pytest.mark.parametrize("args", [
    {"s": {1, 2}}, {"b": b"\x00\xff"}, {"o": SHARED_OBJECT}, _circular(), {(1, 2): "tuple key"}, {1: "a", "b": 2},
    {"n": float("nan"), "i": float("inf")}, {"deep": [[[[[[[[[[[]]]]]]]]]]]}, "not a dict", None, 10**400,
], ids=["set", "bytes", "object", "circular", "tuple_key", "mixed_keys", "nan", "deep", "text", "none", "huge_int"])
def test_non_json_arguments_are_recorded_and_loops_still_found(home, caplog, args):
    driver = Driver()
    warnings: list[str] = []
    for n in range(3):
        warnings += driver.turn(TOOL, args, MISSING_FILE)
        assert ledger_size(driver.agent) == n + 1
    signatures = {o.signature for o in driver.agent.data[LEDGER_KEY].outcomes}
    assert len(signatures) == 1  # the same arguments give the same signature
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert_no_catch_all(caplog)


