"""The cooldown rule, as properties over arbitrary sequences of findings: every anomaly type
is judged on its own, so none can starve another."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from org.contracts import Finding
from org.contracts.finding import SEVERITY_ORDER
from org.contracts.role import Doctrine
from org.kernel.cascade import resolve_role
from org.kernel.paths import OrganizationLayout
from org.supervisor.radio_check import SupervisorState, decide, is_check_turn, may_steer

ANOMALIES = ["stall", "loop", "churn", "rerun", "context", "cascade", "pace"]
ROLES = Path(__file__).resolve().parents[1] / "roles"
#: each shipped role as the kernel makes it (bugfix extends codegen)
SHIPPED = [resolve_role(OrganizationLayout(ROLES.parent), p.stem, roles_dir=ROLES).role.doctrine for p in sorted(ROLES.glob("*.yaml"))]


def finding(anomaly: str, severity: str, turn: int) -> Finding:
    exempt = anomaly == "pace" and severity == "emergency"
    return Finding(anomaly=anomaly, severity=severity, template=anomaly, turn=turn, cooldown_exempt=exempt)


per_check = st.dictionaries(
    st.sampled_from(ANOMALIES),
    st.sampled_from(SEVERITY_ORDER[:2]),  # warning/critical; emergency is drawn separately for pace
    max_size=len(ANOMALIES),
)
checks = st.lists(st.tuples(per_check, st.booleans()), min_size=1, max_size=40)


# 150 examples of up to 40 checks each explore the rule well; more add minutes, not cases
@settings(max_examples=150, deadline=None)
@given(checks=checks, cooldown=st.integers(min_value=0, max_value=6), gap=st.integers(min_value=1, max_value=3),
       saved=st.booleans())
def test_cooldown_rule(checks, cooldown, gap, saved):
    doctrine = Doctrine(cooldown_turns=cooldown)
    state = SupervisorState()
    fired: list[Finding] = []
    for index, (present, emergency) in enumerate(checks):
        turn = (index + 1) * gap
        findings = [finding(a, s, turn) for a, s in present.items() if a != "pace"]
        if emergency:
            findings.append(finding("pace", "emergency", turn))
        if saved:  # the state goes through a chat save and reload between checks
            state = SupervisorState.from_dict(state.to_dict())
        before = SupervisorState.from_dict(state.to_dict())
        result = decide(findings, state, doctrine)
        for steered in result.steering:
            state.record(steered)

        # liveness and independence: exactly the findings whose own cooldown allows it steer
        eligible = [f for f in findings if may_steer(f, before, doctrine.cooldown_for(f.anomaly))]
        assert sorted(f.anomaly for f in result.steering) == sorted(f.anomaly for f in eligible)
        # most severe first
        severities = [SEVERITY_ORDER.index(f.severity) for f in result.steering]
        assert severities == sorted(severities, reverse=True)
        # PACE emergency is exempt and always steers
        if emergency:
            assert result.steering[0].anomaly == "pace" and result.steering[0].severity == "emergency"
        fired.extend(result.steering)

    # safety: the same type never steers twice within its cooldown, unless it got more severe
    last: dict[str, Finding] = {}
    for f in fired:
        previous = last.get(f.anomaly)
        if previous is not None and not f.cooldown_exempt and f.turn - previous.turn < cooldown:
            assert SEVERITY_ORDER.index(f.severity) > SEVERITY_ORDER.index(previous.severity)
        last[f.anomaly] = f


@settings(max_examples=150, deadline=None)
@given(doctrine=st.sampled_from(SHIPPED), length=st.integers(min_value=1, max_value=40),
       presence=st.dictionaries(st.sampled_from(ANOMALIES[:-1]), st.tuples(st.integers(1, 3), st.integers(0, 2)), min_size=1))
def test_with_the_shipped_doctrines_no_persistent_anomaly_is_starved(doctrine, length, presence):
    """Several anomalies present at once, each on its own rhythm (present every k-th turn from
    an offset), checked at the doctrine's interval: each one steers on its first check and
    again whenever its own cooldown has passed and it is there, whatever the others do."""
    state = SupervisorState()
    steered: dict[str, list[int]] = {a: [] for a in presence}
    for turn in range(1, length + 1):
        if not is_check_turn(turn, doctrine.radio_check_interval_turns):
            continue
        present = [a for a, (every, offset) in presence.items() if turn % every == offset % every]
        result = decide([finding(a, "warning", turn) for a in present], state, doctrine)
        for f in result.steering:
            state.record(f)
            steered[f.anomaly].append(turn)
        for anomaly in present:
            turns = steered[anomaly]
            last_before = next((t for t in reversed(turns) if t < turn), None)
            due = last_before is None or turn - last_before >= doctrine.cooldown_for(anomaly)
            assert (turn in turns) == due, (anomaly, turn, turns)
