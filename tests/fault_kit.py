"""What the fault tests share: the stand-in agent ``Driver``, objects that misbehave, and
the checks of the promise below.

The fault tests (``tests/test_faults_<source>.py``, one file per input source) break
every input source of the pack in every way we could think of.

The promise under test (``org/a0/hooks.py``): a hook never raises, the pack fails
open (the agent's loop carries on, the pack switches itself off or ignores the broken
source), the problem is logged once on the "a0org" logger with the file or field and
the reason, and nothing is lost (tool outcomes stay recorded, steering is delivered).

The hooks run for real: either through the entry points in ``org.a0.hooks`` with a
stand-in agent (``Driver``), or through the real hook files loaded by the stand-in
Agent-Zero loader (``Session`` from conftest). The organization folder is a real
temporary folder with the pack's roles.

Where the pack does not keep its promise, the test is a strict xfail naming the bug
(see its reason); once the bug is fixed the marker goes and the test stays as a
regression test.
"""

from __future__ import annotations

import asyncio
import collections
import json
from pathlib import Path
from typing import Any, Callable

import yaml
from conftest import ROOT

from org.a0 import hooks
from org.contracts import RoleProfile, SaluteReport
from org.contracts.common import PACE_LEVELS
from org.contracts.finding import SEVERITY_ORDER
from org.kernel.dispatcher import ORG_ATTR, PACE_ATTR, ROLE_ATTR
from org.kernel.outcomes import LEDGER_KEY, ToolLedger
from org.standin.agent import LoopData, Response, StandInAgent, Tool
from org.supervisor.steering import TAG

LOGGER = "a0org"
#: what ``hooks._failed`` logs when an exception reached the hook's last line of defence,
#: i.e. nothing closer to the source handled (and named) the problem
CATCH_ALL = "failed and was skipped"
MISSING_FILE = "cat: /app/config.yml: No such file or directory"
TOOL = "code_execution_tool"
LOOP_TEXT = f"{TAG} Loop: you ran "


# --------------------------------------------------------------------------- files


def active_file(home: Path) -> Path:
    return home / "active.json"


def org_file(home: Path) -> Path:
    return home / "replay.yaml"


def role_file(home: Path, role: str = "codegen") -> Path:
    return home / "roles" / f"{role}.yaml"


# --------------------------------------------------------------------------- helpers


def a0org_messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def logged(caplog, *fragments: str) -> list[str]:
    return [m for m in a0org_messages(caplog) if all(f in m for f in fragments)]


def assert_logged_once(caplog, *fragments: str) -> str:
    found = logged(caplog, *fragments)
    assert len(found) == 1, f"expected one a0org message with {fragments}, found {found}; all messages: {a0org_messages(caplog)}"
    return found[0]


def assert_no_catch_all(caplog) -> None:
    caught = logged(caplog, CATCH_ALL)
    assert not caught, f"a problem reached the hook's catch-all instead of being handled (and named) where it is read: {caught}"


def assert_no_duplicate_messages(caplog) -> None:
    messages = a0org_messages(caplog)
    repeated = [m for m, n in collections.Counter(messages).items() if n > 1]
    assert not repeated, f"logged more than once: {repeated}"


def assert_active(agent: Any, role: str = "codegen") -> None:
    role_dict = getattr(agent, ROLE_ATTR, None)
    assert isinstance(role_dict, dict) and role_dict["role_id"] == role, f"the pack is not active: {ROLE_ATTR}={role_dict!r}"
    assert getattr(agent, PACE_ATTR, None) in PACE_LEVELS
    assert getattr(agent, ORG_ATTR, None) == "replay"


def assert_inactive(agent: Any) -> None:
    for attr in (ROLE_ATTR, PACE_ATTR, ORG_ATTR):
        assert getattr(agent, attr, None) is None, f"{attr} is {getattr(agent, attr)!r} with no usable organization"


def ledger_size(agent: Any) -> int:
    ledger = agent.data.get(LEDGER_KEY)
    return len(ledger.outcomes) if isinstance(ledger, ToolLedger) else 0


def last_outcome(agent: Any):
    return agent.data[LEDGER_KEY].outcomes[-1]


def report(home: Path, role: str = "codegen") -> SaluteReport:
    return SaluteReport.model_validate_json((home / "reports" / f"{role}_latest.json").read_text(encoding="utf-8"))


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the text")


DEFAULT: Any = object()


class Driver:
    """One stand-in agent run through the three hook entry points of ``org.a0.hooks``,
    in the order Agent-Zero's message loop calls them. Era C: the chat model's context
    length is ``agent.config.chat_model.ctx_length``, no plugin needed.

    Callbacks let "another layer" change the agent at each step of the turn.
    """

    def __init__(self, era: str = "C"):
        self.agent = StandInAgent(era=era)
        self.turns = 0

    def turn(
        self,
        tool: str | None = TOOL,
        args: Any = DEFAULT,
        output: str = "done",
        *,
        before: Callable[[Any], None] | None = None,
        after_dispatch: Callable[[Any], None] | None = None,
        before_end: Callable[[Any], None] | None = None,
        response: Any = DEFAULT,
        tool_name: Any = DEFAULT,
        loop_data: Any = DEFAULT,
    ) -> list[str]:
        """Run one turn; returns the warnings added to the history during it."""
        agent = self.agent
        self.turns += 1
        own_loop_data = agent.__dict__.get("loop_data")
        if isinstance(own_loop_data, LoopData):
            own_loop_data.iteration += 1
        ld = own_loop_data if loop_data is DEFAULT else loop_data
        start = len(agent.history)
        if before:
            before(agent)
        assert hooks.before_main_llm_call(agent, loop_data=ld) is None
        if after_dispatch:
            after_dispatch(agent)
        if tool is not None:
            if isinstance(own_loop_data, LoopData):
                own_loop_data.current_tool = Tool(tool, {"turn": self.turns} if args is DEFAULT else args)
            message = Response(output, break_loop=False) if response is DEFAULT else response
            assert hooks.tool_execute_after(agent, response=message, tool_name=tool if tool_name is DEFAULT else tool_name) is None
            if isinstance(own_loop_data, LoopData):
                own_loop_data.current_tool = None
        if before_end:
            before_end(agent)
        assert asyncio.run(hooks.message_loop_end(agent, loop_data=ld)) is None
        return [m.content["system_warning"] for m in agent.history[start:] if m.kind == "warning"]

    def fail(self, n: int = 1, **kwargs: Any) -> list[str]:
        """The same failing call ``n`` times (a loop after 3); returns all warnings."""
        warnings: list[str] = []
        for _ in range(n):
            warnings += self.turn(TOOL, {"code": "cat /app/config.yml"}, MISSING_FILE, **kwargs)
        return warnings


class Raising:
    """An object whose every attribute access, str() and repr() raise."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("__class__", "__dict__"):
            return object.__getattribute__(self, name)
        raise RuntimeError(f"attribute {name} exploded")

    def __str__(self) -> str:
        raise RuntimeError("str exploded")

    def __repr__(self) -> str:
        raise RuntimeError("repr exploded")


class Opaque:
    """An object of a type no layer expects; plain attribute access works."""

    def __repr__(self) -> str:
        return "<Opaque>"



def set_attr(name: str, value: Any) -> Callable[[Any], None]:
    return lambda agent: setattr(agent, name, value)


def set_data(key: str, value: Any) -> Callable[[Any], None]:
    return lambda agent: agent.data.__setitem__(key, value)


def valid_role_dict() -> dict:
    return RoleProfile.model_validate(yaml.safe_load((ROOT / "roles" / "codegen.yaml").read_text(encoding="utf-8"))).model_dump(mode="json")



def assert_valid_supervisor_state(state: Any) -> None:
    assert isinstance(state, dict)
    json.dumps(state, allow_nan=False)  # survives saving the chat
    assert state["version"] == 1
    assert type(state["turn"]) is int and state["turn"] >= 1
    for key in ("last_fired", "episode"):
        assert isinstance(state[key], dict) and all(isinstance(k, str) and type(v) is int for k, v in state[key].items())
    assert all(v in SEVERITY_ORDER for v in state["last_severity"].values())
    assert isinstance(state["injections"], int)


