"""``a0org replay TRACE.jsonl``: run a recorded session through the real hook files.

The trace is JSON lines (docs/replay.md): an optional header
``{"kind": "header", "role": ROLE_ID, "doctrine": {overrides}}``, then one line per turn.
The session runs in a stand-in agent with its own organizations folder holding the
pack's roles, with the header's role as the default role and its doctrine overrides applied.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import yaml

from org.contracts import Organization, RoleProfile, TraceHeader, TraceTurn
from org.kernel import cascade, loading
from org.kernel.loading import DocumentError, Problem, load_yaml
from org.kernel.log import forget_logged
from org.kernel.paths import ENV_HOME, OrganizationLayout
from org.kernel.process_env import environment
from org.macrocosm.volume import ENV_VOLUME
from org.resources import organizations_templates_dir, roles_dir
from org.standin.session import StandInSession, TurnResult

REPLAY_ORG_ID = "replay"


def load_trace(path: Path) -> tuple[TraceHeader | None, list[TraceTurn]]:
    """Parse and validate a trace, reporting every bad line with its number."""
    header: TraceHeader | None = None
    turns: list[TraceTurn] = []
    problems: list[Problem] = []
    try:
        lines = loading.read_text(path).splitlines()
    except OSError as exc:
        raise DocumentError([Problem(str(path), None, "", f"cannot read: {exc.strerror or exc}")]) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), number, "", f"not valid JSON: {exc.msg}"))
            continue
        model = TraceHeader if isinstance(data, dict) and data.get("kind") == "header" else TraceTurn
        if model is TraceHeader and (turns or header is not None):
            problems.append(Problem(str(path), number, "kind", "a header may only be the first line"))
            continue
        try:
            item = loading.validate(model, data, path)
        except DocumentError as exc:
            problems.extend(Problem(p.path, number, p.field, p.reason) for p in exc.problems)
            continue
        if isinstance(item, TraceHeader):
            header = item
            try:
                role_of(header)  # its role and doctrine overrides, checked here where the line is known
            except DocumentError as exc:
                problems.extend(Problem(str(path), number, p.field, p.reason) for p in exc.problems)
        else:
            if turns and turns[-1].turn == item.turn:
                problems.extend(Problem(str(path), number, field, reason) for field, reason in further_call_problems(item))
            turns.append(item)
    if problems:
        raise DocumentError(problems)
    return header, turns


#: what a reply carries once, on the line of its first call
REPLY_FIELDS = ("user", "response", "htn", "bst", "pace", "context_fill")


def further_call_problems(line: TraceTurn) -> list[tuple[str, str]]:
    """What is wrong with a line that repeats the turn of the line before (a further call of the
    same reply): it must call a tool, and the reply's own fields belong on its first line."""
    problems = [(field, "a further call of the turn before: the reply's fields go on its first line")
                for field in REPLY_FIELDS if getattr(line, field) is not None]
    if not line.tool:
        problems.append(("tool", "a line with the turn of the line before is a further call of that reply and needs a tool"))
    return problems


def _deep_merge(base: dict, overrides: dict) -> dict:
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = _deep_merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def role_of(header: TraceHeader | None) -> dict[str, Any]:
    """The pack's role the header names (the default role without one), its doctrine
    overrides applied and validated: :class:`DocumentError` with fields like ``doctrine.cooldown_turns``."""
    default = load_yaml((organizations_templates_dir() / "software_dev.yaml").read_text(encoding="utf-8"))["default_role"]
    role_id = header.role if header and header.role else default
    if not (roles_dir() / f"{role_id}.yaml").is_file():
        raise DocumentError([Problem("trace header", 1, "role", f"no role '{role_id}' among the pack's roles")])
    role = cascade.resolve_role(OrganizationLayout(roles_dir()), role_id, roles_dir=roles_dir()).role.model_dump(
        mode="json", exclude={"extends"})
    if header and header.doctrine:
        role["doctrine"] = _deep_merge(role.get("doctrine", {}), header.doctrine)
        loading.validate(RoleProfile, role, "trace header")
    return role


def prepare_organization(home: Path, header: TraceHeader | None) -> str:
    """Write roles, an organization and ``active.json`` for the replay into ``home``.

    Returns the role the session starts in.
    """
    (home / "roles").mkdir(parents=True, exist_ok=True)
    for role_file in roles_dir().glob("*.yaml"):
        shutil.copyfile(role_file, home / "roles" / role_file.name)
    organization = load_yaml((organizations_templates_dir() / "software_dev.yaml").read_text(encoding="utf-8"))
    role_id = header.role if header and header.role else organization["default_role"]
    role = role_of(header)
    if header and header.doctrine:
        (home / "roles" / f"{role_id}.yaml").write_text(yaml.safe_dump(role, sort_keys=False), encoding="utf-8")
    organization.update(org_id=REPLAY_ORG_ID, org_name="Replay", default_role=role_id)
    if role_id not in Organization.model_validate(organization).role_ids():
        organization["hierarchy"][role_id] = {"subordinates": []}
    (home / f"{REPLAY_ORG_ID}.yaml").write_text(yaml.safe_dump(organization, sort_keys=False), encoding="utf-8")
    active = {"schema_version": 1, "org_id": REPLAY_ORG_ID, "activated_at": datetime.now(timezone.utc).isoformat(), "activated_by": "a0org replay"}
    (home / "active.json").write_text(json.dumps(active), encoding="utf-8")
    (home / "reports" / "archive").mkdir(parents=True, exist_ok=True)
    return role_id


@contextmanager
def organization_home(folder: Path | None) -> Iterator[Path]:
    """Point the pack at ``folder`` (or a temporary one) for the length of a session. The
    session is local: a shared volume named in the environment (``$A0ORG_VOLUME``) is not
    linked, so a replay gives the same lines wherever it runs."""
    temporary = folder is None
    home = Path(tempfile.mkdtemp(prefix="a0org-")) if temporary else folder
    home.mkdir(parents=True, exist_ok=True)
    forget_logged()
    try:
        with environment({ENV_HOME: str(home), ENV_VOLUME: None}):
            yield home
    finally:
        if temporary:
            shutil.rmtree(home, ignore_errors=True)


def run_session(header: TraceHeader | None, turns: list[TraceTurn], home: Path, era: str = "D") -> list[TurnResult]:
    prepare_organization(home, header)
    return StandInSession(era=era).run(turns)


def steering_lines(results: list[TurnResult]) -> list[dict[str, Any]]:
    """One line per supervisor action, in the order they happened: a blocked call (before
    the turn's steering), each steering, and the pause that ends the session's supervision."""
    lines: list[dict[str, Any]] = []
    paused = False
    for r in results:
        if r.blocked:
            lines.append({"turn": r.turn, "anomaly": r.blocked[0], "action": "block", "text": r.blocked[1]})
        for anomaly, text in r.steering:
            lines.append({"turn": r.turn, "anomaly": anomaly, "action": "steer", "text": text})
        if r.paused and not paused:
            lines.append({"turn": r.turn, "anomaly": r.pause_reason or "pause", "action": "pause", "text": r.pause_text or ""})
        paused = r.paused
    return lines


def replay(path: Path, era: str = "D", org_dir: Path | None = None) -> list[dict[str, Any]]:
    header, turns = load_trace(path)
    with organization_home(org_dir) as home:
        results = run_session(header, turns, home, era)
    return steering_lines(results)
