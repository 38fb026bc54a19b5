"""Relayed learnings in a real Agent-Zero: they reach the model's next prompt as information,
not as a warning, once (harness and conditions: tests/test_real_agent_zero.py)."""

from __future__ import annotations

import json

from test_real_agent_zero import FINAL, install_pack, pytestmark, reply, run_chat, tree, unit_keys, warnings  # noqa: F401
from volume_units import ROLE, sign

from org.contracts.learning import Learning
from org.contracts.salute import SaluteSignals
from org.contracts.steering_message import SteeringMessage
from org.kernel.files import atomic_write_text
from org.macrocosm import relay
from org.macrocosm.daemon import Heartbeat
from org.macrocosm.inbox import INFORMATION_KEY
from org.macrocosm.state import UnitState
from org.macrocosm.volume import ENV_UNIT, ENV_VOLUME, VolumeLayout


def relayed_message(unit: str) -> dict:
    """What the XO sends ``unit`` when unit alpha found out that pytest is not on PATH."""
    learner, receiver = UnitState(unit="alpha"), UnitState(unit=unit, topics=["pytest"])
    found = Learning(kind="command_fix", text="`pytest -q` fails (bash: pytest: command not found); `python -m pytest -q` works",
                     digest="0123456789abcdef", turn=2, programs=["pytest"])
    index = relay.Relay()
    index.index(receiver)


    index.take(learner, SaluteSignals(turn=2, role_id="codegen", doctrine_version="0" * 16, doctrine=ROLE.doctrine, learnings=[found]),
               {"alpha": learner, unit: receiver})
    steering = relay.due(receiver, now=0.0)
    return sign(SteeringMessage(
        id="fedcba9876543210fedcba9876543210", seq=1, unit=unit, sender_role="xo", kind="inform", severity="hint",
        text=steering.text, sources=list(steering.sources), created_at="2026-01-01T00:00:00Z", expires_at="2099-01-01T00:00:00Z",
        epoch=1,
    ).model_dump(mode="json"))


def test_a_relayed_learning_reaches_the_next_prompt_as_information(tree, tmp_path):  # noqa: F811
    install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    layout, unit_id = VolumeLayout(tmp_path / "volume"), "unit-a"
    payload = relayed_message(unit_id)
    message_file = layout.message_file(unit_id, 1, payload["id"])
    atomic_write_text(message_file, json.dumps(payload))
    layout.xo_dir.mkdir()
    Heartbeat(layout).beat()  # an XO runs on the volume
    requests = tmp_path / "requests.json"

    result = run_chat(tree, [reply("attempt 1", "ls"), FINAL], tmp_path,
                      env_extra={ENV_VOLUME: str(layout.root), ENV_UNIT: unit_id, **unit_keys(tmp_path, unit_id)},
                      harness_args=("--dump-requests", str(requests)))

    informed = [m["content"] for m in result["history"] if not m["ai"] and INFORMATION_KEY in m["content"]]
    assert len(informed) == 1 and "- unit alpha: pytest -q fails" in informed[0]
    assert not [w for w in warnings(result) if "unit alpha" in w]  # information, not a warning
    first_prompt = next(r["request"]["messages"] for r in json.loads(requests.read_text()) if r["kind"] == "main")
    assert INFORMATION_KEY in json.dumps(first_prompt) and "python -m pytest -q works" in json.dumps(first_prompt)
    logged = [item for item in result["log"] if item["heading"] == "XO xo: learned by unit alpha"]
    assert len(logged) == 1 and logged[0]["type"] == "info"
    assert not message_file.exists() and (layout.processed(unit_id) / message_file.name).is_file()
    assert not layout.rejected(unit_id).exists()
