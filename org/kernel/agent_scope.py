"""Where an agent works: its chat's project, its top-level agent, its working directory, its thoughts.

Facts about Agent-Zero (v0.9.8 and v1.x alike): a chat's project is
``context.data["project"]`` (set by ``helpers/projects.activate_project``); a subordinate
agent keeps its superior in ``data["_superior"]`` and shares the chat's context, whose
``agent0`` is the top agent; the code execution tool's shell starts in the project's
folder (``usr/projects/<name>``), else in the ``workdir_path`` setting (default
``usr/workdir``). Every reader returns a plain value and never raises.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

from org.lazy_patterns import lazy_pattern

from .agent_zero import agent_number, read_attr
from .paths import _a0_root

PROJECT_KEY = "project"
SUPERIOR_KEY = "_superior"
#: On an agent's data: what its latest ``call_subordinate`` handed on (``org.supervisor.handoff.record``).
#: A subordinate runs only inside its superior's call, so the record it reads is of the call that made its task.
HANDOFF_KEY = "_org_handoff"
#: Where paths inside the Agent-Zero container start; mapped to the real base folder when it is elsewhere.
CONTAINER_ROOT = PurePosixPath("/a0")
_THOUGHTS = lazy_pattern(r'"thoughts"\s*:\s*\[(.*?)\]', re.DOTALL)
_STRING = lazy_pattern(r'"((?:[^"\\]|\\.)*)"')


def a0_root() -> Path:
    """Agent-Zero's base folder (asked from Agent-Zero when running inside it, else /a0)."""
    return _a0_root()


def chat_project(agent: Any) -> str | None:
    """The name of the Agent-Zero project the agent's chat is in, or None."""
    context = read_attr(agent, "context")
    data = read_attr(context, "data")
    value = data.get(PROJECT_KEY) if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def top_agent(agent: Any) -> Any:
    """The chat's top-level agent (number 0): up the superiors, else ``context.agent0``; None when neither is found."""
    current = agent
    for _ in range(64):
        if agent_number(current) == 0:
            return current
        data = read_attr(current, "data")
        superior = data.get(SUPERIOR_KEY) if isinstance(data, dict) else None
        if superior is None:
            break
        current = superior
    top = read_attr(read_attr(agent, "context"), "agent0")
    return top if top is not None and agent_number(top) == 0 else None


def handed_down(agent: Any) -> dict | None:
    """The superior's record of the delegation that gave ``agent`` its task (a copy), or None."""
    data = read_attr(agent, "data")
    superior_data = read_attr(data.get(SUPERIOR_KEY) if isinstance(data, dict) else None, "data")
    handoff = superior_data.get(HANDOFF_KEY) if isinstance(superior_data, dict) else None
    return dict(handoff) if isinstance(handoff, dict) else None


def _workdir_setting() -> str | None:
    for name in ("helpers.settings", "python.helpers.settings"):
        try:
            value = importlib.import_module(name).get_settings().get("workdir_path")
        except Exception:  # not inside Agent-Zero, or an era without the setting
            continue
        return value if isinstance(value, str) and value.strip() else None
    return None


def agent_workdir(agent: Any, root: Path | None = None) -> Path:
    """The folder the agent's shell starts in: its project's folder, else the ``workdir_path`` setting, else ``usr/workdir``."""
    root = root or a0_root()
    project = chat_project(agent)
    if project and "/" not in project and "\\" not in project and not project.startswith("."):
        return root / "usr" / "projects" / project
    configured = _workdir_setting()
    if configured:
        path = PurePosixPath(configured)
        if path.is_relative_to(CONTAINER_ROOT) and root != Path(CONTAINER_ROOT):
            return root / path.relative_to(CONTAINER_ROOT)  # a container path, while Agent-Zero's folder is elsewhere
        return Path(configured) if path.is_absolute() else root / configured
    return root / "usr" / "workdir"


def resolve_in(workdir: Path | None, name: str) -> str | None:
    """``name`` as an absolute path: relative names are taken from ``workdir``; None when there is none to take them from."""
    path = PurePosixPath(name)
    if str(name).startswith("~"):
        return None
    if path.is_absolute():
        return str(path)
    if workdir is None:
        return None
    parts: list[str] = []
    for part in (PurePosixPath(workdir) / path).parts:
        if part == "..":
            if len(parts) > 1:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return str(PurePosixPath(*parts))


def last_thoughts(agent: Any) -> list[str]:
    """The ``thoughts`` of the agent's last answer (the JSON its tool call came in), or []."""
    text = read_attr(read_attr(agent, "loop_data"), "last_response")
    if not isinstance(text, str) or '"thoughts"' not in text:
        return []
    try:
        start, end = text.index("{"), text.rindex("}") + 1
        thoughts = json.loads(text[start:end]).get("thoughts")
        if isinstance(thoughts, list):
            return [str(t) for t in thoughts if t]
        return [str(thoughts)] if thoughts else []
    except (ValueError, AttributeError):
        match = _THOUGHTS.search(text)  # not strict JSON (Agent-Zero parses leniently): the strings in the list
        return [s.encode().decode("unicode_escape", "ignore") for s in _STRING.findall(match.group(1))] if match else []


__all__ = ["a0_root", "agent_workdir", "chat_project", "handed_down", "last_thoughts", "resolve_in", "top_agent"]
