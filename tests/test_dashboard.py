"""``a0org dashboard``: the XO page's documents and its server (a real one on 127.0.0.1)."""

from __future__ import annotations

import http.client
import json
import os
import threading
from pathlib import Path

import pytest
from test_views import ROLE, deliver, publish, steering
from volume_units import publish as publish_scenario
from volume_units import test_home

from org.macrocosm.roles import RoleBook
from org.macrocosm.views.dashboard import EventCache, unit_events, units_document
from org.macrocosm.views.web import BindError, make_server
from org.macrocosm.volume import VolumeLayout
from org.macrocosm.xo import XO

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def layout(tmp_path) -> VolumeLayout:
    volume = VolumeLayout(tmp_path / "volume")
    volume.units_dir.mkdir(parents=True)
    return volume


def paused_volume(layout: VolumeLayout) -> Path:
    """'stuck' paused by a real XO, 'busy' steered once, 'calm' left alone; the XO's home."""
    doctrine = ROLE.doctrine.model_copy(update={"radio_check_interval_turns": 1, "cooldown_turns": 0})
    home = layout.root.parent / "xo-home"
    home.mkdir(mode=0o700)
    xo = XO(layout, "engineering_xo", test_home(home), roles=RoleBook(fixed={ROLE.role_id: (doctrine, ROLE.pace_plan)}))
    publish(layout, "calm")
    publish_scenario(layout.root, "busy", "context", 1, doctrine)
    for turn in (1, 2, 3):  # a loop steering, then the same failing call twice more: the pause
        publish_scenario(layout.root, "stuck", "loop_ignored", turn, doctrine)
        xo.sweep()
    return home


def test_paused_units_come_first_with_their_last_steering_and_what_followed(layout):
    home = paused_volume(layout)
    doc = units_document(layout, EventCache(home), home=home)
    assert [u["unit"] for u in doc["units"]][0] == "stuck" and doc["paused"] == 1
    stuck = doc["units"][0]
    assert stuck["paused"] is True and stuck["role"] == "codegen"
    assert stuck["last_steering"]["kind"] == "pause" and stuck["last_steering"]["where"] == "waiting"
    assert stuck["last_steering"]["outcome"] == "paused" and stuck["last_steering"]["text"].startswith("[SUPERVISOR]")
    busy = next(u for u in doc["units"] if u["unit"] == "busy")
    assert busy["last_steering"]["anomaly"] == "context" and busy["last_steering"]["outcome"] == "no progress yet"
    assert next(u for u in doc["units"] if u["unit"] == "calm")["last_steering"] is None
    assert sum(sum(b.values()) for b in doc["chart"]["bars"]) == 3  # two steering and the pause
    events = unit_events(EventCache(home), "stuck")["events"]
    assert [e["type"] for e in events if e["type"] in ("steering", "pause")] == ["steering", "pause"]
    assert unit_events(EventCache(home), "../x")["error"]


def test_steering_text_passes_the_redactor(layout):
    publish(layout, "leaky")
    deliver(layout, steering("leaky", 1, text=f"[SUPERVISOR] you ran `curl -H 'Authorization: token {SECRET}' x` 3 times"))
    doc = units_document(layout, EventCache(layout.root / "xo"))
    text = doc["units"][0]["last_steering"]["text"]
    assert SECRET not in json.dumps(doc) and "[REDACTED]" in text


class Served:
    def __init__(self, layout: VolumeLayout, bind: str = "127.0.0.1:0", token: str | None = None, home: Path | None = None):
        self.server = make_server(layout.root, bind, token, home)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def get(self, path: str, method: str = "GET", host: str | None = None, headers: dict | None = None) -> tuple[int, dict, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            connection.putheader("Host", host)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_server_is_read_only_and_answers_only_under_its_own_address(layout):
    served = Served(layout, home=paused_volume(layout))
    try:
        status, headers, body = served.get("/")
        assert status == 200 and b"XO dashboard" in body
        assert "script-src 'self'" in headers["Content-Security-Policy"] and headers["X-Frame-Options"] == "DENY"
        status, _, body = served.get("/api/units")
        assert status == 200 and json.loads(body)["units"][0]["unit"] == "stuck"
        assert served.get("/api/units", "POST")[0] == 405
        assert served.get("/api/units", host="evil.example:80")[0] == 421  # a name someone else controls
        assert served.get("/api/units", host=f"localhost:{served.port}")[0] == 200
        assert served.get("/../../etc/passwd")[0] == 404
    finally:
        served.close()


def test_a_token_is_needed_off_loopback_and_checked_when_given(layout):
    with pytest.raises(BindError, match="token"):
        make_server(layout.root, "0.0.0.0:0")
    served = Served(layout, token="s3cret-token")
    try:
        assert served.get("/")[0] == 200  # the page holds no data
        assert served.get("/api/units")[0] == 401
        assert served.get("/api/units?token=wrong")[0] == 401
        assert served.get("/api/units?token=s3cret-token")[0] == 200
        assert served.get("/api/units", headers={"Authorization": "Bearer s3cret-token"})[0] == 200
    finally:
        served.close()


def test_the_command_refuses_a_public_address_without_a_token(tmp_path):
    from pack_commands import a0org

    (tmp_path / "v").mkdir()
    result = a0org("dashboard", "--volume", str(tmp_path / "v"), "--http", "0.0.0.0:0", env={**os.environ, "A0ORG_DASHBOARD_TOKEN": ""})
    assert result.returncode == 2 and "not a loopback address; give a token" in result.stderr

