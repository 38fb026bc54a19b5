"""The supervisor's core works on values: what the hooks read of the agent (``TurnReadings``)
and one port for what it does to it. No Agent-Zero agent object here, stand-in or real:
the port below records what a real one would be asked to do."""

from __future__ import annotations

import asyncio

from org.contracts import RoleProfile
from org.kernel import loading
from org.kernel.layers import AgentReadings
from org.kernel.outcomes import ledger_of, record_outcome
from org.kernel.paths import OrganizationLayout
from org.kernel.turn_readings import TurnReadings, read_turn
from org.resources import roles_dir
from org.standin.agent import StandInAgent
from org.supervisor.microcosm import STATE_KEY, MicrocosmSupervisor

ROLE = loading.load(RoleProfile, roles_dir() / "codegen.yaml").model_dump(mode="json")
FAILING = ("code_execution_tool", {"runtime": "terminal", "code": "python app.py"},
           "Traceback (most recent call last):\n  File \"app.py\", line 1, in <module>\nModuleNotFoundError: No module named 'flask'\n")


class RecordingPort:
    """The agent's side of the port, as plain data: the history, the UI log, the pause, the blocked tool."""

    def __init__(self) -> None:
        self.data: dict = {}
        self.history: list[str] = []
        self.log_items: list[tuple[str, str]] = []
        self.paused = False
        self.tool_result: str | None = None
        self.marks: dict = {}  # what the dispatcher sets on the agent

    async def warn(self, text: str) -> None:
        self.history.append(text)

    async def inform(self, key: str, text: str) -> None:
        self.history.append(f"{key}: {text}")

    def log(self, *, type: str, heading: str, content: str = "", kvps: dict | None = None) -> None:
        self.log_items.append((type, heading))

    def pause(self) -> bool:
        self.paused = True
        return True

    def block_tool(self, text: str) -> bool:
        self.tool_result = text
        return True

    def save(self) -> bool:
        return True

    def mark(self, **attributes) -> None:
        self.marks.update(attributes)

    def clear(self, *names: str) -> None:
        for name in names:
            self.marks[name] = None


def readings(port: RecordingPort, **values) -> TurnReadings:
    return TurnReadings(**{"number": 0, "role": ROLE, "pace_level": "primary", "paused": port.paused, "chat": "c1",
                           "project": None, "layers": AgentReadings(None, None, None), **values})


def test_a_loop_is_steered_blocked_and_paused_on_values_alone(tmp_path):
    supervisor = MicrocosmSupervisor(lambda: OrganizationLayout(tmp_path))
    port = RecordingPort()
    ran = 0
    for turn in range(1, 16):
        ledger_of(port.data).tick(new_task=turn == 1)
        port.tool_result = None
        blocked = supervisor.tool_start(readings(port), port, FAILING[0], FAILING[1])
        if not blocked:
            ran += 1
        supervisor.tool_done(port.data, FAILING[0], FAILING[1], port.tool_result or FAILING[2], None)
        asyncio.run(supervisor.turn_end(readings(port), port))
        if port.paused:
            break
    assert port.paused and ran <= 4
    headings = [h for _, h in port.log_items]
    assert headings[0] == "Supervisor: loop" and "Supervisor: blocked" in headings and headings[-1] == "Supervisor: paused"
    assert port.history[0].startswith("[SUPERVISOR] Loop")
    assert port.data[STATE_KEY]["paused_turn"] is not None
    assert (tmp_path / "events" / "events.jsonl").is_file()  # the events of the chat the readings named


def test_without_a_role_the_core_does_nothing(tmp_path):
    port = RecordingPort()
    record_outcome(port.data, *FAILING, False, "ModuleNotFoundError")
    assert asyncio.run(MicrocosmSupervisor(lambda: OrganizationLayout(tmp_path)).turn_end(readings(port, role=None), port)) is None
    assert STATE_KEY not in port.data
    assert port.history == [] and port.log_items == []


def test_the_reader_takes_the_agent_once_into_values():
    agent = StandInAgent(era="D")
    agent._org_active_role, agent._org_pace_level = ROLE, "contingent"  # type: ignore[attr-defined]
    agent.context.paused = True
    agent.context.data["project"] = "shop"
    agent.loop_data.last_response = "same"
    agent.loop_data.params_persistent = {}
    first = read_turn(agent, agent.loop_data, layers=True)
    again = read_turn(agent, agent.loop_data)
    assert (first.number, first.role, first.pace_level, first.paused, first.project) == (0, ROLE, "contingent", True, "shop")
    assert first.layers is not None and again.layers is None
    assert (first.native_repeat, again.native_repeat) == (False, True)  # the same response twice: Agent-Zero warned
    assert first.chat == str(agent.context.id)


def test_the_reader_keeps_the_user_s_message_on_a_task_s_first_turn_only():
    """``loop_data.user_message`` is a history message whose content is ``fw.user_message.md``
    filled in (Agent-Zero v0.9.8 and v1.x): ``{"user_message": …, "attachments": …}``."""
    agent = StandInAgent(era="D")
    loop_data = agent.loop_data
    loop_data.user_message = agent.hist_add_message(False, {"user_message": "continue", "attachments": []})
    loop_data.iteration = 0
    assert read_turn(agent, loop_data).user_message == "continue"
    loop_data.iteration = 1
    assert read_turn(agent, loop_data).user_message is None  # read when a task may begin, not at every turn
    loop_data.iteration = 0
    loop_data.user_message = agent.hist_add_message(False, "x" * 5000)
    assert read_turn(agent, loop_data).user_message == "x" * 2000
    for odd in (None, agent.hist_add_message(False, {"attachments": []}), agent.hist_add_message(False, {"user_message": 7})):
        loop_data.user_message = odd
        assert read_turn(agent, loop_data).user_message is None


def test_the_dispatcher_sets_role_and_pace_and_reports_on_values_alone(tmp_path):
    from org.contracts import TraceHeader
    from org.kernel.dispatcher import ORG_ATTR, PACE_ATTR, ROLE_ATTR, dispatch, judge_after_tool
    from org.kernel.store import OrganizationStore
    from org.replay import prepare_organization

    prepare_organization(tmp_path, TraceHeader(kind="header", role="codegen", doctrine={}))
    store, port = OrganizationStore(tmp_path), RecordingPort()
    first = readings(port, role=None, pace_level=None, iteration=0, org_id=None)
    assert dispatch(lambda: first, port, store) == "primary"
    assert port.marks[ROLE_ATTR]["role_id"] == "codegen" and port.marks[PACE_ATTR] == "primary" and port.marks[ORG_ATTR]
    for n in range(5):  # five different failures: PACE climbs after the tool, as the triggers say
        record_outcome(port.data, "code_execution_tool", {"code": f"python t{n}.py"}, f"Traceback (most recent call last):\nValueError: bad {n}")
        level = judge_after_tool(readings(port, pace_level=port.marks[PACE_ATTR], org_id=port.marks[ORG_ATTR]), port)
        port.marks[PACE_ATTR] = level
    assert level == "contingent" and ("info", "[ORG] PACE escalated alternate -> contingent (codegen)") in port.log_items
    assert sorted(p.name for p in (tmp_path / "reports").glob("*_latest.json")) == ["codegen_latest.json"]
    store_off = OrganizationStore(tmp_path / "nowhere")
    assert dispatch(lambda: first, port, store_off) is None and port.marks[ROLE_ATTR] is None  # no organization: every mark cleared


def test_the_llm_supervisors_trace_a_task_from_values_and_the_chats_state():
    """The task digest and the prompt sections' inputs come from ``TaskReadings`` and the top
    agent's state dict: a subordinate's call goes into its superior's trace by number, the
    steering counted is the chat's since the task began."""
    from dataclasses import replace

    from org.llm_supervisors import digests
    from org.llm_supervisors.task_readings import TaskReadings

    data: dict = {}
    top = TaskReadings(number=0, task_data=data, pace_level="primary", steering=2, workdir="/a0/usr/projects/shop",
                       user_message="add a payment module", iteration=0)
    digests.begin(top)
    digests.note_tool(replace(top, thoughts=("The module comes first",)), "code_execution_tool",
                      {"runtime": "terminal", "code": "cat > app/pay.py"}, "", True, None, False)
    digests.note_tool(replace(top, number=1), "code_execution_tool", {"runtime": "terminal", "code": "pytest tests/test_pay.py"},
                      "3 passed in 0.1s", True, None, False)
    digests.note_turn(replace(top, iteration=4, pace_level="alternate"))
    digests.note_tool(top, "response", {"text": "done"}, "done", True, None, True)
    digest = digests.finish(replace(top, steering=5), 1)
    assert [(t.agent, t.tool) for t in digest.tools] == [(0, "code_execution_tool"), (1, "code_execution_tool"), (0, "response")]
    assert digest.files_touched == ["/a0/usr/projects/shop/app/pay.py", "/a0/usr/projects/shop/tests/test_pay.py"]
    assert (digest.turns, digest.pace_levels, digest.steering, digest.outcome) == (5, ["primary", "alternate"], 3, "completed")
    assert digest.reasoning == ["The module comes first"] and data == {}  # the trace left the chat's state with the digest
    assert digests.begin(replace(top, task_data=None)) is None  # an agent that keeps no state: nothing traced, nothing raised
