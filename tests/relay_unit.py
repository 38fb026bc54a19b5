"""A unit process for the learning relay: the pack's real hook files in the stand-in Agent-Zero,
linked to a shared volume, doing one of a few kinds of work, then idling turn after turn
(each turn drains the inbox) until information from other units reaches its history.

    python tests/relay_unit.py --org-home DIR --work learns|pytest|other [--seconds S] --out FILE

The unit's environment names the volume and its keys (``A0ORG_VOLUME``, ``A0ORG_UNIT``,
``A0ORG_STEERING_KEYS``, ``A0ORG_UNIT_KEY``, ``A0ORG_UNIT_STATE``). ``FILE`` gets, as JSON, the
information messages in the chat's history with the time each was first seen (seconds since
the epoch), the warnings, and when its work was done (``worked_at``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from org.contracts import TraceHeader, TraceTurn  # noqa: E402
from org.macrocosm.inbox import INFORMATION_KEY  # noqa: E402
from org.replay import prepare_organization  # noqa: E402
from org.standin.session import StandInSession  # noqa: E402

FAILS = {"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "pytest -q tests/test_api.py"},
         "ok": False, "output": "bash: pytest: command not found"}
WORKS = {"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "python -m pytest -q tests/test_api.py"},
         "ok": True, "output": "12 passed in 0.4s"}
#: what each kind of unit does before it idles
WORK = {
    "learns": [FAILS, WORKS],  # finds out that pytest is not on PATH here
    "pytest": [{"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "pytest -q tests/test_models.py"},
                "ok": True, "output": "3 passed"}],  # runs pytest too: wants to know
    "other": [{"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "npm run build"},
               "ok": True, "output": "built in 2.1s"}],  # other files, other programs
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--org-home", type=Path, required=True, help="the organizations folder ($A0ORG_HOME)")
    parser.add_argument("--work", choices=sorted(WORK), required=True)
    parser.add_argument("--seconds", type=float, default=10.0, help="idle this long at most")
    parser.add_argument("--until", type=int, default=1, help="stop once this many information messages arrived")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    # the organizations folder is $A0ORG_HOME, set by the caller with the volume's variables
    args.org_home.mkdir(parents=True, exist_ok=True)
    prepare_organization(args.org_home, TraceHeader(kind="header", role="codegen", doctrine={"radio_check_interval_turns": 1}))
    session = StandInSession(era="D")
    turn = 0

    def run(step: dict) -> None:
        nonlocal turn
        turn += 1
        session.run([TraceTurn.model_validate({"turn": turn, **step})])

    for step in WORK[args.work]:
        run(step)
    worked_at = time.time()  # its report of this turn is published: a learning in it is out
    seen: dict[str, float] = {}
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline and len(seen) < args.until:  # each idle turn echoes its number: no loop
        run({"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": f"echo {turn}"}, "ok": True, "output": str(turn)})
        for message in session.agent.history:
            if isinstance(message.content, dict) and INFORMATION_KEY in message.content:
                seen.setdefault(message.content[INFORMATION_KEY], time.time())
        time.sleep(0.05)
    args.out.write_text(json.dumps({"information": seen, "warnings": session.agent.warnings(), "turns": turn, "worked_at": worked_at}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
