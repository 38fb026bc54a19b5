"""``a0org demo --macrocosm``: keys, an XO and three stand-in units on a temporary volume, with
a loop steered, a learning relayed and an ignored loop steering escalated to a pause, as a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_macrocosm_demo_shows_steering_a_relay_and_a_pause(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("A0ORG_")}
    done = subprocess.run([sys.executable, "-m", "org", "demo", "--macrocosm", "--out", str(tmp_path / "demo")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "XO -> alpha: steer #1 (hint)" in out and ">> [SUPERVISOR] Loop:" in out
    assert "(info) - unit charlie: pytest -q tests/test_api.py fails" in out
    assert "XO -> bravo: steer #1 (hint)" in out and "XO -> bravo: pause #2 (critical)" in out and "|| paused by the XO" in out
    [bravo] = [line for line in out.splitlines() if line.strip().startswith("bravo ") and "codegen" in line][-1:]
    assert bravo.rstrip().endswith("paused by the XO")
    assert out.count("$ a0org status") == 3
    # the units hold copies of the public keys and their own key only: no private key within their reach
    assert "private key is within reach" not in done.stderr and "INSECURE" not in done.stderr
    assert (tmp_path / "demo" / "keys" / "xo" / "xo.sqlite3").is_file()
    assert not (tmp_path / "demo" / "volume" / "xo" / "units").exists()
