"""A unit process for the circuit breaker under an XO: the pack's real hook files in the stand-in
Agent-Zero, linked to a shared volume, running the same failing command turn after turn until
the chat is paused or the turns run out.

    python tests/breaker_unit.py --turns 15 [--model-seconds S] --out FILE

The unit's environment names the volume, its keys and its organizations folder (``A0ORG_VOLUME``,
``A0ORG_UNIT``, ``A0ORG_STEERING_KEYS``, ``A0ORG_UNIT_KEY``, ``A0ORG_UNIT_STATE``, ``A0ORG_HOME``).
``--model-seconds`` is how long the model takes to answer (the XO judges the last report
meanwhile). ``FILE`` gets, as JSON, how many times the command really ran, whether the chat
was paused, and the UI log's headings.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from org.contracts import TraceHeader, TraceTurn  # noqa: E402
from org.replay import prepare_organization  # noqa: E402
from org.standin.session import StandInSession  # noqa: E402

FAILS = {"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "python app.py"}, "ok": False,
         "output": 'Traceback (most recent call last):\n  File "app.py", line 1, in <module>\nModuleNotFoundError: No module named \'flask\'\n'}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=15)
    parser.add_argument("--model-seconds", type=float, default=0.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    home = Path(os.environ["A0ORG_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    prepare_organization(home, TraceHeader(kind="header", role="codegen", doctrine={}))  # the shipped doctrine
    session = StandInSession(era="D")
    original = session._call

    async def call(point: str, **kwargs):
        if point == "before_main_llm_call":
            time.sleep(args.model_seconds)  # the model answering
        return await original(point, **kwargs)

    session._call = call  # type: ignore[method-assign]
    results = []
    for turn in range(1, args.turns + 1):
        [result] = session.run([TraceTurn.model_validate({"turn": turn, **FAILS})])
        results.append(result)
        if result.paused:
            break
    args.out.write_text(json.dumps({
        "ran": sum(1 for r in results if not r.blocked), "turns": len(results), "paused": results[-1].paused,
        "headings": [i.heading for i in session.agent.context.log.items if i.heading],
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
