"""The XO page in a real browser (headless Chromium) against a live XO and stand-in units,
all real processes: what a person sees. Skipped without chromium (tests/browser.py)."""

from __future__ import annotations

import re

from browser import browser_or_skip
from test_xo_processes import EVERY_TURN, WAIT, finish, procs, terminate, volume  # noqa: F401 - fixtures
from volume_units import messages, wait_for

ROW = "[...document.querySelectorAll('#units tbody tr')]"


def start_dashboard(procs, volume) -> str:  # noqa: F811 - the fixture's name
    process, log = procs.start(["-m", "org", "dashboard", "--volume", str(volume), "--home", str(procs.home), "--http", "127.0.0.1:0"],
                               "dashboard")
    assert wait_for(lambda: "http://" in log.read_text() or process.poll() is not None, WAIT), log.read_text()
    return re.search(r"http://\S+/", log.read_text()).group(0)


def row_text(unit: str) -> str:
    return f"({ROW}.find(r => r.dataset.unit === '{unit}') || {{innerText: ''}}).innerText"


def test_the_xo_page_shows_the_paused_unit_first_and_new_steering_without_a_reload(procs, volume, tmp_path):  # noqa: F811
    browser = browser_or_skip(tmp_path)
    try:
        xo, xo_log = procs.xo(volume)
        common = ("--doctrine", EVERY_TURN, "--interval", "0", "--lockstep", "--timeout", str(WAIT))
        # a loop steering, then the same failing call twice more: the pause (no lockstep: nothing answers turn 2)
        stuck = procs.unit(volume, "alpha", "--scenario", "loop_ignored", "--turns", "3", "--doctrine", EVERY_TURN,
                           "--interval", "0.5", "--timeout", str(WAIT))
        calm = procs.unit(volume, "bravo", "--scenario", "healthy", "--turns", "3", "--interval", "0")
        for process, log in (stuck, calm):
            finish(process, log)
        url = start_dashboard(procs, volume)

        browser.open(url)
        browser.evaluate("window.loadedOnce = 'yes'")
        browser.wait_for(f"{ROW}.length === 2 && {ROW}[0].dataset.unit === 'alpha'")
        first = browser.evaluate(f"{ROW}[0].innerText")
        assert "paused" in first and "loop" in first and "pause" in first, first
        assert browser.evaluate("document.querySelector('#units .badge.paused').textContent") == "paused"
        assert "paused" not in browser.evaluate(row_text("bravo"))
        assert browser.evaluate("document.querySelectorAll('#chart svg rect.bar').length") >= 1
        browser.screenshot("xo-dashboard-paused.png")

        late = procs.unit(volume, "charlie", "--scenario", "loop", "--turns", "1", *common)
        finish(*late)
        assert wait_for(lambda: messages(volume, "charlie"), WAIT)
        browser.wait_for(f"{row_text('charlie')}.includes('loop')")
        assert browser.evaluate("window.loadedOnce") == "yes"  # the same page: no reload
        assert "[SUPERVISOR]" in browser.evaluate(row_text("charlie"))

        browser.evaluate(f"{ROW}.find(r => r.dataset.unit === 'alpha').click()")
        browser.wait_for("document.querySelector('#events tbody').innerText.includes('pause')")
        assert not browser.evaluate("document.getElementById('unit-events').hidden")
        path = browser.screenshot("xo-dashboard-events.png")
        assert path.stat().st_size > 10_000
        terminate(xo, xo_log)
    finally:
        browser.close()
