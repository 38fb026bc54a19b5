"""A unit process stuck in a loop: the pack's real hook files in the stand-in Agent-Zero, linked
to a shared volume, running the same failing command turn after turn (each turn drains the
inbox and publishes a report), until ``--until`` steering warnings reached its history or
``--seconds`` passed.

    python tests/looping_unit.py --org-home DIR [--seconds S] [--until N] --out FILE

The unit's environment names the volume and its keys (``A0ORG_VOLUME``, ``A0ORG_UNIT``,
``A0ORG_STEERING_KEYS``, ``A0ORG_UNIT_KEY``, ``A0ORG_UNIT_STATE``). ``FILE`` gets, as JSON, the
warnings in the chat's history and the number of turns.
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
from org.replay import prepare_organization  # noqa: E402
from org.standin.session import StandInSession  # noqa: E402

FAILS = {"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "make test"},
         "ok": False, "output": "make: *** No rule to make target 'test'.  Stop."}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--org-home", type=Path, required=True, help="the organizations folder ($A0ORG_HOME)")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--until", type=int, default=3, help="stop once this many steering warnings arrived")
    parser.add_argument("--pace", type=float, default=0.1, help="seconds between turns")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.org_home.mkdir(parents=True, exist_ok=True)
    prepare_organization(args.org_home, TraceHeader(kind="header", role="codegen", doctrine={"radio_check_interval_turns": 1}))
    session = StandInSession(era="D")
    deadline = time.monotonic() + args.seconds
    turn = 0
    while time.monotonic() < deadline:
        turn += 1
        session.run([TraceTurn.model_validate({"turn": turn, **FAILS})])
        warnings = [w for w in session.agent.warnings() if "(XO " in w]
        args.out.write_text(json.dumps({"warnings": warnings, "turns": turn}))
        if len(warnings) >= args.until:
            break
        time.sleep(args.pace)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
