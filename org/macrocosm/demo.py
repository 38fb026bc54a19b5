"""``a0org demo --macrocosm``: an XO and three stand-in units on a temporary volume, live.

Keys are made as ``a0org keys`` makes them (a signing key, a report key and a role per unit);
three units run the pack's real hook files in the stand-in Agent-Zero (each turn drains its
inbox, then publishes its sealed report); the XO sweeps the volume after every turn. Scripted
sessions show a loop steered, a learning relayed from one unit to another, and a loop steering
ignored and escalated to a pause, with ``a0org status`` printed as it changes. No Docker, no model.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, TextIO

from org.contracts import RoleProfile, TraceHeader, TraceTurn
from org.kernel import loading
from org.kernel.process_env import environment
from org.replay import organization_home, prepare_organization
from org.resources import roles_dir

from . import keys
from .daemon import Heartbeat
from .inbox import INFORMATION_KEY
from .link import ENV_STEERING_KEYS, ENV_UNIT_KEY, ENV_UNIT_STATE
from .roles import RoleBook
from .views.rows import status_lines
from .volume import ENV_UNIT, ENV_VOLUME, VolumeLayout
from .xo import XO

UNITS = ("alpha", "bravo", "charlie")
#: The demo's codegen doctrine, the XO's copy: a check every turn, no cooldown, a pause after 2 nudges.
DEMO_DOCTRINE = {"radio_check_interval_turns": 1, "cooldown_turns": 0, "max_turns_without_progress": 4,
                 "escalation": {"pause_after_nudges": 2}}


def _call(code: str, output: str, ok: bool = True, **extra: Any) -> dict:
    return {"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": code}, "output": output, "ok": ok, **extra}


MISSING = "cat: /app/config.yml: No such file or directory"
#: (phase, unit, turn): every unit's turns, in the order they happen
SCRIPT: list[tuple[str, str, dict]] = [
    ("a loop, steered", "alpha", _call("ls /app", "main.py\nsettings/")),
    *[("a loop, steered", "alpha", _call("cat /app/config.yml", MISSING, ok=False)) for _ in range(3)],
    ("a loop, steered", "alpha", _call("ls /app/settings", "__init__.py\ndefaults.yml")),
    ("a loop, steered", "alpha", _call("pytest -q tests/test_models.py", "3 passed")),
    ("a learning, relayed", "charlie", _call("pytest -q tests/test_api.py", "bash: pytest: command not found", ok=False)),
    ("a learning, relayed", "charlie", _call("python -m pytest -q tests/test_api.py", "12 passed in 0.4s")),
    ("a learning, relayed", "alpha", _call("pytest -q tests/test_views.py", "bash: pytest: command not found", ok=False)),
    *[("a loop steering ignored, escalated to a pause", "bravo",
       _call("python manage.py migrate", "django.db.utils.OperationalError: no such table: app_config", ok=False))
      for _ in range(6)],
]


def _xo_roles() -> RoleBook:
    role = loading.load(RoleProfile, roles_dir() / "codegen.yaml")
    doctrine = role.doctrine.model_validate({**role.doctrine.model_dump(), **DEMO_DOCTRINE})
    return RoleBook(fixed={"codegen": (doctrine, role.pace_plan)})


def _said(session: Any, before: int) -> list[str]:
    """What reached the unit's history since ``before`` messages: the XO's steering and information."""
    lines = []
    for message in session.agent.history[before:]:
        content = message.content
        if message.kind == "warning" and "(XO " in str(content.get("system_warning", "")):
            lines.append(f">> {content['system_warning']}")
        elif isinstance(content, dict) and INFORMATION_KEY in content:
            lines.extend(f"(info) {line}" for line in str(content[INFORMATION_KEY]).splitlines())
    return lines


def run_macrocosm_demo(out: TextIO, folder: Path | None = None, era: str = "D") -> Path:
    """Run the demo, printing as it goes; the folder holding the keys, the volume and the units."""
    from org.standin.session import StandInSession

    root = folder or Path(tempfile.mkdtemp(prefix="a0org-macrocosm-"))
    key_folder, volume = keys.KeyFolder(root / "keys"), root / "volume"
    volume.mkdir(parents=True, exist_ok=True)
    keys.init(key_folder)
    envs: dict[str, dict[str, str]] = {}
    for unit in UNITS:
        keys.add_unit(key_folder, unit, "codegen")
        # what a unit is given: the public keys and its own report key, copied out of the key folder
        given = root / "units" / unit
        given.mkdir(parents=True, exist_ok=True)
        shutil.copy(key_folder.public_file, given / "steering.pub")
        shutil.copy(key_folder.unit_key(unit), given / "report.key")
        envs[unit] = {ENV_VOLUME: str(volume), ENV_UNIT: unit, ENV_STEERING_KEYS: str(given / "steering.pub"),
                      ENV_UNIT_KEY: str(given / "report.key"), ENV_UNIT_STATE: str(given / "mark.json")}
    layout = VolumeLayout(volume)
    home = keys.XOHome.load(key_folder.xo_home, volume)
    xo = XO(layout, "engineering_xo", home, roles=_xo_roles(), relay_interval=0.0)
    xo.recover()
    heartbeat = Heartbeat(layout)
    out.write(f"a0org demo --macrocosm: an XO and units {', '.join(UNITS)} on {volume}\n"
              f"keys in {key_folder.root}; the XO's home {key_folder.xo_home}\n")
    with organization_home(root / "organization") as org_home:
        prepare_organization(org_home, TraceHeader(kind="header", role="codegen", doctrine={"radio_check_interval_turns": 1}))
        sessions = {unit: StandInSession(era=era) for unit in UNITS}
        turns = dict.fromkeys(UNITS, 0)
        phase = None
        try:
            for name, unit, raw in SCRIPT:
                if name != phase:
                    if phase is not None:
                        _status(out, layout, home.layout.root)
                    phase = name
                    out.write(f"\n== {phase}\n")
                heartbeat.beat()  # the XO runs: the units leave the steering to it
                turns[unit] += 1
                session = sessions[unit]
                before = len(session.agent.history)
                with environment(envs[unit]):  # the hooks find the unit's link there
                    [result] = session.run([TraceTurn.model_validate({"turn": turns[unit], **raw})])
                out.write(f"{unit:8s} turn {turns[unit]:2d} | {raw['args']['code']}\n")
                for line in _said(session, before):
                    out.write(f"{'':8s}         {line}\n")
                if result.paused:
                    # a paused Agent-Zero waits before its next call: this turn would not end or report
                    out.write(f"{'':8s}         || paused by the XO: the agent waits until someone resumes it\n")
                    continue
                swept = xo.sweep()
                for message in swept.sent:
                    out.write(f"{'':8s}   XO -> {message.unit}: {message.kind} #{message.seq} ({message.severity})\n")
            _status(out, layout, home.layout.root)
        finally:
            heartbeat.stop()
            xo.store.close()
    out.write(f"\nSee it again: a0org status --volume {volume} --home {key_folder.xo_home}; "
              f"the XO's events: a0org events --xo-home {key_folder.xo_home}\n")
    return root


def _status(out: TextIO, layout: VolumeLayout, home: Path) -> None:
    import time

    out.write("\n$ a0org status\n")
    for line in status_lines(layout, time.time(), home=home):
        out.write(f"  {line}\n")
