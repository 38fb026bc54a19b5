"""The pack inside a real Agent-Zero, with the model replaced by a scripted
OpenAI-compatible server on 127.0.0.1.

Runs only when ``A0ORG_TEST_A0_ROOT`` points at an Agent-Zero tree (v0.9.8.x or v1.x)
and ``A0ORG_TEST_A0_PYTHON`` at a Python 3.12 with its requirements
(``tests/real_a0/make_env.sh`` builds one). Each scenario copies the tree, installs the
pack with ``install_all.sh`` and runs one chat in its own process.
``A0ORG_TEST_HARNESS_ARGS`` adds harness options, e.g. ``--disable-plugin _telegram_integration``
for v0.9.9.0, whose Telegram plugin needs a package the small environment lacks.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from pack_commands import install
from test_xo_processes import xo_home
from volume_units import SIGNER, sign, unit_key

from org.contracts import SaluteReport
from org.contracts.steering_message import SteeringMessage
from org.kernel.files import atomic_write_text
from org.macrocosm.daemon import Heartbeat
from org.macrocosm.link import ENV_STEERING_KEYS, ENV_UNIT_KEY, ENV_UNIT_STATE
from org.macrocosm.signing import public_line
from org.macrocosm.volume import ENV_UNIT, ENV_VOLUME, VolumeLayout, read_report

A0_ROOT = os.environ.get("A0ORG_TEST_A0_ROOT")
A0_PYTHON = os.environ.get("A0ORG_TEST_A0_PYTHON")
pytestmark = [
    pytest.mark.real_a0,
    pytest.mark.skipif(not (A0_ROOT and A0_PYTHON), reason="set A0ORG_TEST_A0_ROOT and A0ORG_TEST_A0_PYTHON to run against a real Agent-Zero"),
]
HARNESS = ROOT / "tests" / "real_a0" / "harness.py"


def reply(headline: str, code: str = "cat /nonexistent/file") -> dict:
    return {
        "thoughts": ["I will read the file."],
        "headline": headline,
        "tool_name": "code_execution_tool",
        "tool_args": {"runtime": "terminal", "session": 0, "reset": False, "code": code},
    }


FINAL = {"thoughts": ["Done."], "headline": "Reporting", "tool_name": "response", "tool_args": {"text": "The file does not exist."}}


def install_pack(tree: Path, activate: bool, doctrine: dict | None = None) -> Path:
    install(ROOT, tree, *(["--activate", "software_dev"] if activate else []), python=A0_PYTHON)
    organizations = tree / "usr" / "organizations"
    if doctrine:
        role_file = organizations / "roles" / "codegen.yaml"
        role = yaml.safe_load(role_file.read_text())
        role["doctrine"].update(doctrine)
        role_file.write_text(yaml.safe_dump(role, sort_keys=False))
    return organizations


def run_chat(tree: Path, script: list[dict], tmp_path: Path, env_extra: dict[str, str] | None = None,
             harness_args: tuple[str, ...] = ()) -> dict:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    env.pop("A0ORG_HOME", None)  # the pack must find the organizations folder through Agent-Zero itself
    extra = [*shlex.split(os.environ.get("A0ORG_TEST_HARNESS_ARGS", "")), *harness_args]
    done = subprocess.run([A0_PYTHON, str(HARNESS), "--script", str(script_file), "--message", "Read /nonexistent/file", *extra],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(lines[-1])
    assert result["ok"], result.get("traceback") or result.get("error")
    return result


@pytest.fixture
def tree(tmp_path) -> Path:
    copy = tmp_path / "a0"
    shutil.copytree(A0_ROOT, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def warnings(result: dict) -> list[str]:
    return [m["content"] for m in result["history"] if not m["ai"] and "system_warning" in m["content"]]


def test_loop_in_a_real_agent_zero_gets_one_supervisor_steering(tree, tmp_path):
    organizations = install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    result = run_chat(tree, [reply(f"attempt {i}") for i in range(1, 4)] + [FINAL], tmp_path)
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "[SUPERVISOR] Loop" in steering[0], warnings(result)
    logged = [item for item in result["log"] if item["heading"] == "Supervisor: loop"]
    assert len(logged) == 1 and logged[0]["type"] == "warning"
    assert result["result"] == "The file does not exist."
    report = SaluteReport.model_validate_json((organizations / "reports" / "codegen_latest.json").read_text())
    assert report.unit.role_id == "codegen" and report.unit.organization == "software_dev"
    assert report.environment.context_tokens_max == 32000 and report.environment.context_tokens_used
    assert report.environment.model == "harness-main"


def test_no_supervisor_warning_on_the_turn_agent_zero_warns_about_a_repeat(tree, tmp_path):
    install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 2})
    same = reply("attempt 3")
    script = [reply("attempt 1"), reply("attempt 2"), same, same, reply("attempt 5"), reply("attempt 6"), FINAL]
    result = run_chat(tree, script, tmp_path)
    history = [m["content"] for m in result["history"]]
    repeat = next(i for i, text in enumerate(history) if "You have sent the same message again" in text)
    # the turn of Agent-Zero's repeat warning ends without a supervisor warning after it
    assert "[SUPERVISOR]" not in history[repeat + 1]
    loops = [w for w in warnings(result) if "[SUPERVISOR] Loop" in w]
    assert len(loops) == 1  # (five failures in a row also draw the PACE contingent steering)
    assert history.index(next(t for t in history if "[SUPERVISOR] Loop" in t)) > repeat + 1


@pytest.mark.parametrize(("message", "steered"), [("continue", True), ("Read it again", False)])
def test_a_user_s_continue_keeps_the_task_s_evidence_and_a_new_request_starts_afresh(tree, tmp_path, message, steered):
    """The same failing run once before the answer and three times after the user's next
    message: after "continue" it is the fourth run of one task (a rerun steered); after a new
    request it is a new task's third."""
    install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    run = "python3 /nonexistent/app.py"
    script = [reply("attempt 1", run), FINAL, reply("attempt 2", run), reply("look", "ls /nonexistent"), reply("attempt 3", run),
              reply("look again", "ls /tmp"), reply("attempt 4", run), FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--then", message))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert bool(steering) is steered, steering
    if steered:
        assert len(steering) == 1 and "[SUPERVISOR] Rerun" in steering[0] and "python3 /nonexistent/app.py" in steering[0]


def test_without_an_active_organization_the_pack_does_nothing(tree, tmp_path):
    organizations = install_pack(tree, activate=False)
    result = run_chat(tree, [reply(f"attempt {i}") for i in range(1, 5)] + [FINAL], tmp_path)
    assert not [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert not [item for item in result["log"] if item["heading"].startswith(("Supervisor:", "[ORG]"))]
    assert not list((organizations / "reports").glob("*.json"))


def unit_keys(tmp_path: Path, unit_id: str) -> dict[str, str]:
    """A unit's environment: the XO's public key, its own report key, its steering mark."""
    public, own = tmp_path / "public" / "steering.pub", tmp_path / "unit.key"
    public.parent.mkdir(exist_ok=True)
    public.write_text(public_line(SIGNER.private.public_key()) + "\n")
    own.write_text(unit_key(unit_id).hex() + "\n")
    own.chmod(0o600)
    return {ENV_STEERING_KEYS: str(public), ENV_UNIT_KEY: str(own), ENV_UNIT_STATE: str(tmp_path / "unit-state.json")}


def test_a_unit_applies_signed_xo_steering_and_publishes_its_report(tree, tmp_path):
    install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    layout, unit_id = VolumeLayout(tmp_path / "volume"), "unit-a"
    payload = SteeringMessage(
        id="0123456789abcdef0123456789abcdef", seq=1, unit=unit_id, sender_role="xo", kind="steer", anomaly="loop",
        severity="warning", text="[SUPERVISOR] Loop: the same command failed three times. Try a different approach.",
        nudge=1, report_turn=3, created_at="2026-01-01T00:00:00Z", expires_at="2099-01-01T00:00:00Z", epoch=1,
    ).model_dump(mode="json")
    payload = sign(payload)
    steering_file = layout.message_file(unit_id, 1, payload["id"])
    atomic_write_text(steering_file, json.dumps(payload))
    layout.xo_dir.mkdir()
    Heartbeat(layout).beat()  # an XO runs on the volume
    requests = tmp_path / "requests.json"

    result = run_chat(tree, [reply(f"attempt {i}") for i in range(1, 4)] + [FINAL], tmp_path,
                      env_extra={ENV_VOLUME: str(layout.root), ENV_UNIT: unit_id, **unit_keys(tmp_path, unit_id)},
                      harness_args=("--dump-requests", str(requests)))

    text = f"{payload['text']} (XO xo, warning)"
    assert [w for w in warnings(result) if "[SUPERVISOR]" in w] == [w for w in warnings(result) if text in w]
    assert len([w for w in warnings(result) if text in w]) == 1
    first_prompt = next(r["request"]["messages"] for r in json.loads(requests.read_text()) if r["kind"] == "main")
    assert text in json.dumps(first_prompt)  # in the very first prompt after it arrived
    logged = [item for item in result["log"] if item["heading"] == "Supervisor (XO xo): loop"]
    assert len(logged) == 1 and logged[0]["type"] == "warning" and text in logged[0]["content"]
    assert not [item for item in result["log"] if item["heading"] == "Supervisor: loop"]  # the XO steers, not the unit
    assert [item["heading"] for item in result["log"] if item["heading"].startswith("Supervisor: XO")] == ["Supervisor: XO"]
    assert not steering_file.exists() and (layout.processed(unit_id) / steering_file.name).is_file()
    assert not layout.rejected(unit_id).exists()
    assert result["result"] == "The file does not exist."

    report = read_report(layout.report(unit_id))
    assert report.unit.unit_id == unit_id and report.unit.role_id == "codegen"
    assert report.reason == "task_end" and report.status.state == "idle"
    assert report.signals is not None and report.signals.turn == 4 and report.signals.role_id == "codegen"
    assert [o.tool for o in report.signals.outcomes] == ["code_execution_tool"] * 3 + ["response"]
    assert report.signals.doctrine.radio_check_interval_turns == 1 and report.signals.context_fill



def test_a_linked_unit_without_a_running_xo_is_steered_by_its_own_supervisor(tree, tmp_path):
    """The volume is there but no XO runs on it: the unit publishes its reports and the
    agent's own supervisor steers the loop, saying in the UI log who steers."""
    install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    layout = VolumeLayout(tmp_path / "volume")
    layout.root.mkdir()
    result = run_chat(tree, [reply(f"attempt {i}") for i in range(1, 4)] + [FINAL], tmp_path,
                      env_extra={ENV_VOLUME: str(layout.root), ENV_UNIT: "unit-a"})
    headings = [item["heading"] for item in result["log"]]
    assert "Supervisor: own supervision" in headings and "Supervisor: loop" in headings
    assert len([w for w in warnings(result) if "[SUPERVISOR] Loop" in w]) == 1
    assert read_report(layout.report("unit-a")).reason == "task_end"


def test_a_real_xo_process_steers_a_looping_unit_in_a_real_agent_zero(tree, tmp_path):
    install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    layout, unit_id = VolumeLayout(tmp_path / "volume"), "unit-a"
    layout.units_dir.mkdir(parents=True)
    xo_log = tmp_path / "xo.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    home = xo_home(tmp_path / "keys")
    with xo_log.open("w") as log:
        xo = subprocess.Popen([sys.executable, "-m", "org", "xo", "--volume", str(layout.root), "--home", str(home)], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while "watching" not in xo_log.read_text() and "polling" not in xo_log.read_text():
            assert xo.poll() is None and time.monotonic() < deadline, xo_log.read_text()
            time.sleep(0.05)
        # the unit's breaker blocks the looping call the XO's steering names, and the chat is paused
        # once that steering is shown to be ignored: the run ends there
        result = run_chat(tree, [reply(f"attempt {i}") for i in range(1, 9)] + [FINAL], tmp_path,
                          env_extra={ENV_VOLUME: str(layout.root), ENV_UNIT: unit_id, **unit_keys(tmp_path, unit_id)},
                          harness_args=("--stop-when-paused",))
    finally:
        xo.terminate()
        xo.wait(timeout=30)
    log_text = xo_log.read_text()
    from_xo = [w for w in warnings(result) if "(XO xo, " in w]
    assert from_xo, (warnings(result), log_text)
    assert "[SUPERVISOR] Loop" in from_xo[0] and all("[SUPERVISOR]" in w for w in from_xo), (from_xo, log_text)
    assert f"steering sent: unit={unit_id} seq=1 anomaly=loop severity=hint kind=steer" in log_text
    assert not [item for item in result["log"] if item["heading"] == "Supervisor: loop"]  # only the XO steers
    applied = sorted(p.name for p in layout.processed(unit_id).glob("*.json"))
    assert len(applied) == len(from_xo) and not layout.rejected(unit_id).exists()
    assert xo.returncode == 0
