"""The no-Docker recipe of docs/macrocosm.md, followed as written: its commands run in a shell
(``~`` a temporary home, ``/srv/macrocosm`` a temporary folder), the XO started as it says, and a
unit process (the pack's real hooks in the stand-in Agent-Zero) given the environment it names.
The unit is steered, and says nothing about a private key within its reach."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from test_xo_processes import Processes, terminate

ROOT = Path(__file__).resolve().parent.parent
WAIT = 120.0


def recipe() -> tuple[list[str], str]:
    """(the commands of the recipe's shell block, the paragraph naming the unit's environment)."""
    text = (ROOT / "docs" / "macrocosm.md").read_text(encoding="utf-8")
    section = text.split("### Without Docker", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines(), section.split("```", 2)[2]


def test_the_no_docker_recipe_works_as_written_without_warnings(tmp_path):
    commands, after = recipe()
    home, volume = tmp_path / "home", tmp_path / "srv-macrocosm"
    home.mkdir()
    setup = [c.replace("/srv/macrocosm", str(volume)) for c in commands if not c.startswith("a0org xo ")]
    shell = f"set -e\na0org() {{ {sys.executable} -m org \"$@\"; }}\ncd {ROOT}\n" + "\n".join(setup)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("A0ORG_")}, "HOME": str(home)}
    done = subprocess.run(["bash", "-c", shell], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr

    [xo_command] = [c for c in commands if c.startswith("a0org xo ")]
    assert xo_command == "a0org xo --volume /srv/macrocosm --home ~/.a0org/xo"
    procs = Processes(tmp_path)
    try:
        procs.home = home / ".a0org" / "xo"
        xo, xo_log = procs.xo(volume, "--polling", "--poll-interval", "0.05")
        named = dict(re.findall(r"`(A0ORG_[A-Z_]+)=([^`]+)`", after))
        unit_env = {**env, **{k: v.replace("~", str(home)).replace("/srv/macrocosm", str(volume)) for k, v in named.items()},
                    "A0ORG_HOME": str(tmp_path / "orgs"), "A0ORG_UNIT_STATE": str(tmp_path / "mark.json")}
        assert set(named) == {"A0ORG_VOLUME", "A0ORG_UNIT", "A0ORG_STEERING_KEYS", "A0ORG_UNIT_KEY"}
        out = tmp_path / "unit.json"
        unit_log = tmp_path / "unit.log"
        with open(unit_log, "ab") as handle:
            unit = subprocess.run([sys.executable, str(ROOT / "tests" / "looping_unit.py"), "--org-home", str(tmp_path / "orgs"),
                                   "--until", "1", "--seconds", "60", "--out", str(out)],
                                  cwd=ROOT, env=unit_env, stdout=handle, stderr=subprocess.STDOUT, timeout=WAIT, check=False)
        assert unit.returncode == 0, unit_log.read_text()
        assert len(json.loads(out.read_text())["warnings"]) == 1, unit_log.read_text()  # steered by the XO
        text = terminate(xo, xo_log)
        assert "steering sent: unit=codegen" in text
        assert [line for line in unit_log.read_text().splitlines() if "WARNING" in line] == []
    finally:
        procs.stop_all()
