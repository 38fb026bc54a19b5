"""A unit process that drains its inbox once and can die at any step of apply -> save -> acknowledge.

Run as ``python tests/unit_crash.py CHAT_FILE DIE_AT`` with the unit's environment set
(``A0ORG_VOLUME``, ``A0ORG_UNIT``, ``A0ORG_STEERING_KEYS``, ``A0ORG_UNIT_STATE``). The chat is
kept in ``CHAT_FILE`` the way Agent-Zero keeps it: ``agent.data`` (without ``_`` keys) and the
history, written by a ``helpers.persist_chat.save_tmp_chat`` of this harness. ``DIE_AT``:

* ``inject``: killed while the warning goes into the history;
* ``before-save``: killed as the chat save starts (the injection is in memory only);
* ``after-save``: killed right after the chat was written (before the acknowledgement);
* ``after-ack``: killed once the drain has returned;
* ``none``: a clean drain.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from org.kernel.agent_zero import AgentPort  # noqa: E402
from org.kernel.turn_readings import read_turn  # noqa: E402
from org.macrocosm.inbox import drain_inbox  # noqa: E402
from org.macrocosm.link import UnitLink  # noqa: E402
from org.standin.agent import StandInAgent  # noqa: E402


def die() -> None:
    os._exit(9)  # as abrupt as kill -9: no cleanup, no flush


def main(chat_file: Path, die_at: str) -> int:
    agent = StandInAgent()
    if chat_file.exists():
        saved = json.loads(chat_file.read_text())
        agent.data.update(saved["data"])
        for text in saved["warnings"]:
            agent.hist_add_warning(text)

    def save_tmp_chat(context) -> None:
        if die_at == "before-save":
            die()
        data = {k: v for k, v in agent.data.items() if not k.startswith("_")}
        tmp = chat_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"data": data, "warnings": agent.warnings()}))
        os.replace(tmp, chat_file)
        if die_at == "after-save":
            die()

    # Agent-Zero's own module, as the unit finds it inside Agent-Zero
    helpers = types.ModuleType("helpers")
    persist = types.ModuleType("helpers.persist_chat")
    persist.save_tmp_chat = save_tmp_chat
    helpers.persist_chat = persist
    sys.modules["helpers"], sys.modules["helpers.persist_chat"] = helpers, persist

    if die_at == "inject":
        original = agent.hist_add_warning

        def dying(message, id=""):
            original(message, id)
            die()

        agent.hist_add_warning = dying

    link = UnitLink.from_env()
    assert link is not None
    asyncio.run(drain_inbox(read_turn(agent), AgentPort(agent), link))
    if die_at == "after-ack":
        die()
    save_tmp_chat(agent.context)  # Agent-Zero saves at the end of the turn too
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
