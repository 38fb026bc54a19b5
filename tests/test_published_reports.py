"""What a unit publishes on the shared volume: redacted, and no more than the XO reads.

The unit runs the pack's real hook files in the stand-in Agent-Zero, linked to a real
temporary volume; its tools print secrets the way real tools do (an API key in an error,
a token in a command line). None of them may reach any file on the volume, and the XO
judging those reports must still see the failures.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from test_unit_link import UNIT, volume  # noqa: F401  (the fixture)
from volume_units import ROLE, report_for, scenario_snapshot

from org.contracts import SaluteReport
from org.kernel.outcomes import ToolOutcome
from org.macrocosm.publishing import report_text
from org.macrocosm.volume import read_report
from org.macrocosm.xo import XO
from org.supervisor.signals import signals_from_snapshot
from org.supervisor.snapshot import Snapshot

API_KEY = "sk-proj-Zq8XvB2mN4kL7pR1tY6wE3uI9oA5sD0f"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Xv2mN4k"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1bml0LTEifQ.c2VjcmV0LXNpZ25hdHVyZQ"
SECRETS = (API_KEY, AWS_SECRET, BEARER, "c2VjcmV0LXNpZ25hdHVyZQ", "wJalrXUtnFEMI")


def leaking_turn(n: int) -> dict:
    """A failing call whose command and output quote secrets; a new call each time (churn)."""
    return {
        "tool": "code_execution_tool",
        "args": {"runtime": "terminal", "code": f"AWS_SECRET_ACCESS_KEY={AWS_SECRET} curl -H 'Authorization: Bearer {BEARER}' https://api.example/v{n}"},
        "output": f"Traceback (most recent call last):\n  File \"client.py\", line 3\nPermissionError: invalid api_key={API_KEY} for https://api.example/v{n}",
    }


def every_file(root) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_secret_printed_by_a_tool_lands_nowhere_on_the_volume(make_session, volume):  # noqa: F811
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    edit = {"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "sed -i 's/v1/v2/' client.py"}, "output": ""}
    session.run(edit, *[leaking_turn(n) for n in range(4)])  # after an edit: the error is the agent's to fix
    xo = XO(volume, "engineering_xo", None)
    result = xo.sweep()
    assert result.parsed == 1 and result.checked == 1 and result.skipped == []
    [sent] = result.sent  # the XO still sees the failures
    assert sent.anomaly in ("loop", "churn", "cascade")

    files = every_file(volume.root)
    assert str(volume.report(UNIT)) in files and len(files) >= 3  # report, XO state, steering
    for path, data in files.items():
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret[:12]}... in {path}"
    outcomes = read_report(volume.report(UNIT)).signals.outcomes
    assert any("[REDACTED]" in (o.command or "") for o in outcomes)
    assert any("[REDACTED]" in (o.error_line or "") for o in outcomes)
    assert {o.message_preview for o in outcomes} == {""}  # a tool's output is not published at all


def test_a_redaction_that_lengthens_a_bounded_text_is_cut_to_its_limit():
    long_line = "x" * 190 + " token=abc"  # 200 characters; "[REDACTED]" is longer than "abc"
    outcome = ToolOutcome(1, "code_execution_tool", False, "execution", "s", "h", "", error_line=long_line, error_signature="e")
    live = Snapshot(turn=1, role_id=ROLE.role_id, doctrine=ROLE.doctrine, outcomes=(outcome,))
    report = report_for(UNIT, scenario_snapshot("healthy", 1)).model_copy(update={"signals": signals_from_snapshot(live)})
    published = SaluteReport.model_validate_json(report_text(report))
    line = published.signals.outcomes[0].error_line
    assert len(line) == 200 and "abc" not in line and line == "x" * 190 + " token=[RE"


moment = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(timezone.utc))


@settings(max_examples=150, deadline=None)
@given(
    turn=st.integers(0, 10**6), fill=st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False)), when=moment,
    task=st.text(max_size=300), step=st.one_of(st.none(), st.text(max_size=200)),
    state=st.sampled_from(["idle", "active", "waiting", "complete"]),
)
def test_a_published_report_reads_back_as_the_same_report(turn, fill, when, task, step, state):
    """Fields at their default are left out and a reader fills them in again: nothing is lost."""
    snapshot = scenario_snapshot("loop", max(turn, 1))
    report = report_for(UNIT, snapshot, state=state, when=when)
    value = report.model_dump(mode="json")
    value["activity"]["current_task"] = task
    value["signals"]["current_step"] = step
    value["signals"]["context_fill"] = fill
    report = SaluteReport.model_validate(value)
    text = report_text(report)
    assert json.loads(text)["schema_version"] == 1
    back = SaluteReport.model_validate_json(text)
    if "[REDACTED]" not in text:
        assert back == report
    assert back.signals.outcomes == report.signals.outcomes
