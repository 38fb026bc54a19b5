"""``a0org doctor --xo``: the XO's home, keys, units' roles, units seen and volume, checked as
doctor checks a unit; and doctor's link problem named in ``--json`` too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from volume_units import TrustingRoles, doctrine, publish, test_home, unit_key

from org.macrocosm import keys
from org.macrocosm.volume import VolumeLayout
from org.macrocosm.xo import XO

ROOT = Path(__file__).resolve().parent.parent


def a0org(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("A0ORG_")}
    return subprocess.run([sys.executable, "-m", "org", *args], cwd=ROOT, capture_output=True, text=True, check=False,
                          env={**environment, **(env or {})})


def test_doctor_xo_checks_the_home_the_roles_and_the_units_seen(tmp_path):
    folder = keys.KeyFolder(tmp_path / "keys")
    keys.init(folder)
    keys.add_unit(folder, "codegen", "codegen")
    keys.add_unit(folder, "devops")  # no role given: the XO would take the report's word
    keys.add_unit(folder, "lab", "alchemy")  # a role the XO does not have
    (folder.xo_home / "units" / "codegen.key").write_text(unit_key("codegen").hex() + "\n")  # the unit seals with the test key
    volume = tmp_path / "volume"
    volume.mkdir()
    xo = XO(VolumeLayout(volume), "xo", test_home(folder.xo_home), roles=TrustingRoles())
    publish(volume, "codegen", "stall", 1, doctrine(radio_check_interval_turns=1))
    xo.sweep()
    xo.store.close()

    done = a0org("doctor", "--xo", "--home", str(folder.xo_home), "--volume", str(volume), "--json")
    assert done.returncode == 1, done.stdout + done.stderr  # the unknown role is a problem
    checks = {(c["topic"], c["subject"]): c for c in json.loads(done.stdout)["checks"]}
    assert checks[("xo-home", str(folder.xo_home))]["level"] == "ok"
    assert checks[("xo-roles", "unit codegen")]["level"] == "ok"
    assert checks[("xo-roles", "unit devops")]["level"] == "warning"
    assert checks[("xo-roles", "unit lab")]["level"] == "problem" and "alchemy" in checks[("xo-roles", "unit lab")]["message"]
    seen = checks[("xo-units", "unit codegen")]["details"]
    assert (seen["role"], seen["nudges"], seen["freshness"]) == ("codegen", 1, "fresh")
    assert checks[("xo-volume", str(volume))]["level"] == "warning"  # no XO is running on it now

    text = a0org("doctor", "--xo", env={"A0ORG_XO_HOME": str(folder.xo_home)}).stdout
    assert "Units seen" in text and "unit codegen: role codegen" in text

    os.chmod(folder.xo_home / "signing", 0o755)
    loose = a0org("doctor", "--xo", "--home", str(folder.xo_home), "--json")
    assert loose.returncode == 1 and "chmod 700" in loose.stdout


def test_doctor_names_why_a_unit_cannot_link_in_its_json(tmp_path):
    volume = tmp_path / "volume"
    volume.mkdir()
    done = a0org("doctor", "--a0-root", str(tmp_path / "no-agent-zero"), "--json",
                 env={"A0ORG_VOLUME": str(volume), "A0ORG_UNIT": "unit-1", "A0ORG_STEERING_KEYS": str(tmp_path / "missing.pub")})
    report = json.loads(done.stdout)
    assert report["checks"][0]["topic"] == "tree"  # no Agent-Zero there: the link is not reached


def test_doctor_link_problem_carries_its_reason(tmp_path, monkeypatch):
    from org.doctor.link import check_supervision_mode

    volume = tmp_path / "volume"
    volume.mkdir()
    monkeypatch.setenv("A0ORG_VOLUME", str(volume))
    monkeypatch.setenv("A0ORG_UNIT", "unit-1")
    monkeypatch.setenv("A0ORG_STEERING_KEYS", str(tmp_path / "missing.pub"))
    [check] = check_supervision_mode()
    assert check.level == "problem" and "missing.pub" in check.message
    assert any("missing.pub" in reason for reason in check.details["reasons"])
