"""Fault tests, source: another layer's extensions, loaded beside the real hook files by
the stand-in loader, garbling the agent between the pack's hooks.

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Session, fail
from fault_kit import (
    TOOL,
    Raising,
    assert_active,
    assert_logged_once,
    assert_no_catch_all,
    assert_no_duplicate_messages,
)

from org.kernel.dispatcher import PACE_ATTR, ROLE_ATTR
from org.kernel.outcomes import LEDGER_KEY
from org.resources import extensions_dir
from org.standin.session import StandInSession
from org.supervisor.microcosm import STATE_KEY

pytestmark = pytest.mark.usefixtures("fresh_store")


# =========================================================================== the real hook files, through the stand-in loader

SABOTEUR = '''\
try:
    from helpers.extension import Extension
except ImportError:
    from python.helpers.extension import Extension


class Saboteur(Extension):
    """Another layer's extension: puts what the test asks for on the agent."""

    async def execute(self, **kwargs):
        for name, value in dict(getattr(self.agent, "_saboteur", {{}}).get("{point}", {{}})).items():
            if name.startswith("data:"):
                self.agent.data[name[5:]] = value
            else:
                setattr(self.agent, name, value)
'''


def saboteur_session(home: Path, tmp_path: Path, era: str) -> Session:
    """A conftest Session whose loader also loads another layer's extensions: one
    before the dispatcher, one before the recorder and one between the recorder and
    the supervisor."""
    folder = tmp_path / "other_layer"
    for point, name in (("before_main_llm_call", "_10_saboteur.py"), ("tool_execute_after", "_20_saboteur.py"),
                        ("message_loop_end", "_40_saboteur.py")):
        (folder / point).mkdir(parents=True)
        (folder / point / name).write_text(SABOTEUR.format(point=point), encoding="utf-8")
    session = Session(home, era)
    session.standin = StandInSession(era=era, extension_folders=[extensions_dir(), folder])
    session.agent = session.standin.agent
    assert [c.__name__ for c in session.standin.points["message_loop_end"]] == ["Saboteur", "SupervisorLoop"]
    return session


@pytest.mark.parametrize("garbage", ["codegen", {}, {"role_id": "codegen"}, Raising()], ids=["text", "empty", "partial", "raising"])
def test_another_extension_garbling_the_role_between_dispatcher_and_supervisor(home, tmp_path, caplog, era, garbage):
    session = saboteur_session(home, tmp_path, era)
    session.agent._saboteur = {"message_loop_end": {ROLE_ATTR: garbage}}
    session.run(*[fail(TOOL) for _ in range(4)])
    assert session.steering() == []
    assert STATE_KEY not in session.agent.data
    assert_logged_once(caplog, f"agent.{ROLE_ATTR}", "not a valid role profile")
    assert_no_catch_all(caplog)
    session.agent._saboteur = {}
    session.run(*[fail(TOOL) for _ in range(3)])
    assert_active(session.agent)
    assert session.agent.data[STATE_KEY]["turn"] == 3
    assert "loop" in [a for _, a in session.anomalies()]


def test_another_extension_garbling_everything_each_turn(home, tmp_path, caplog, era):
    session = saboteur_session(home, tmp_path, era)
    session.agent._saboteur = {
        "before_main_llm_call": {"_htn_state": "garbage", "_bst_store": ["garbage"], "data:ctx_window": {"tokens": "lots"},
                                 "data:org_supervisor": {"turn": "x"}, "data:_tool_failures": {"history": "x"}},
        "tool_execute_after": {"_error_diagnosis": {"tool": None, "error_class": 3}},
        "message_loop_end": {PACE_ATTR: "panic", "data:_org_tool_ledger": "garbage"},
    }
    session.run(*[fail(TOOL) for _ in range(5)])
    assert session.agent._org_active_role["role_id"] == "codegen"
    assert session.agent.data[STATE_KEY]["turn"] == 1  # reset every turn by the garbage, never crashed
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)
    for fragment in ("agent._htn_state", "agent._bst_store", f"agent.{PACE_ATTR}", f"agent.data[{LEDGER_KEY!r}]"):
        assert_logged_once(caplog, fragment)
    session.agent._saboteur = {}
    session.agent._htn_state = session.agent._bst_store = None
    session.run(*[fail(TOOL, {"path": "/y"}) for _ in range(3)])
    assert [a for _, a in session.anomalies()] == ["loop"]


