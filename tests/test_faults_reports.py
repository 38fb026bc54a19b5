"""Fault tests, source: the SALUTE report files the pack writes and reads back.

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

import pytest
from fault_kit import (
    LOOP_TEXT,
    MISSING_FILE,
    Driver,
    assert_active,
    assert_logged_once,
    assert_no_catch_all,
    logged,
    report,
)

pytestmark = pytest.mark.usefixtures("fresh_store")


# =========================================================================== the file system


def test_reports_folder_is_a_file(home, caplog):
    reports = home / "reports"
    if reports.exists():
        for path in sorted(reports.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        reports.rmdir()
    reports.write_text("not a folder", encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3)
    driver.turn("text_editor", {"p": 1}, "PermissionError: denied")
    driver.turn("browser_agent", {"p": 1}, "ConnectionError: refused")  # a cascade: the supervisor corrects health
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert reports.read_text(encoding="utf-8") == "not a folder"
    assert_logged_once(caplog, str(reports), "cannot write the SALUTE report for 'codegen'")
    assert_no_catch_all(caplog)


def test_reports_archive_is_a_file(home, caplog):
    archive = home / "reports" / "archive"
    archive.rmdir()
    archive.write_text("not a folder", encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert report(home).unit.role_id == "codegen"  # the latest report is still written
    assert archive.read_text(encoding="utf-8") == "not a folder"
    assert_logged_once(caplog, f"{archive}: cannot archive the SALUTE report for 'codegen': ")
    assert not logged(caplog, "cannot write the SALUTE report")  # the report itself was written
    assert_no_catch_all(caplog)


def test_unwritable_archive_does_not_turn_every_report_into_the_first(home):
    """Regression: when only the archive copy failed, write_report() returned None although the
    latest report was written, so the dispatcher never set last_report_turn and rewrote the
    report every turn with reason 'first'. Now an archive problem is only logged: the report
    counts as written and the next one is due after salute_interval_turns."""
    archive = home / "reports" / "archive"
    archive.rmdir()
    archive.write_text("not a folder", encoding="utf-8")
    driver = Driver()
    driver.turn()
    assert report(home).reason == "first"
    for _ in range(2):
        driver.turn()
    assert report(home).reason == "first" and report(home).time.turns_elapsed == 1  # interval is 5 turns


@pytest.mark.parametrize("content", ["{", "[1, 2", '{"status": "ok"}', "", b"\xff\xfe"], ids=["truncated", "truncated_list", "wrong_shape", "empty", "not_utf8"])
def test_corrupted_latest_report_is_logged_once_and_the_supervisor_goes_on(home, caplog, content):
    driver = Driver()
    driver.turn()
    latest = home / "reports" / "codegen_latest.json"
    tools = (("code_execution_tool", MISSING_FILE), ("text_editor", "PermissionError: denied"), ("browser_agent", "ConnectionError: refused"))
    for tool, output in tools * 2:  # cascades: the supervisor wants to correct the report's health
        latest.write_bytes(content if isinstance(content, bytes) else content.encode())
        driver.turn(tool, {"p": 1}, output)
    assert_active(driver.agent)
    assert any("Cascade" in w for w in driver.agent.warnings())
    assert_logged_once(caplog, str(latest), "cannot read it to correct health")
    assert_no_catch_all(caplog)


