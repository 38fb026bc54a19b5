"""``a0org explain ROLE``: a role as the kernel runs it, each value with the file and line it
came from, the steering texts and the LLM supervisors' settings with theirs
(org/kernel/cascade.py has the cascade)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from org.contracts import ActiveOrganization
from org.kernel import cascade, loading
from org.kernel.loading import DocumentError
from org.kernel.paths import OrganizationLayout, UnsafePathError
from org.llm.config import resolve_config
from org.llm_supervisors.runs import Files
from org.supervisor.steering import SteeringBook

#: The parts of a role shown, in this order (the rest of the role is who it is, not how it is run).
SECTIONS = ("doctrine", "pace_plan", "capabilities", "chain_of_command")


@dataclass
class Explanation:
    role_id: str
    organization: str | None
    project: str | None
    layers: list[str]
    values: list[tuple[str, Any, str]]  # (field path, value, where it came from)
    steering: list[tuple[str, str, str]]  # (key, text, where it came from)
    supervisors: list[tuple[str, Any, str]] = field(default_factory=list)  # the LLM supervisors' settings, as values
    root: str = ""

    def relative_to(self, root: Path) -> "Explanation":
        """File names inside the organizations folder, shown relative to it (it is named once, on top)."""
        prefix = str(root).rstrip("/") + "/"
        short = lambda text: text.replace(prefix, "")  # noqa: E731
        self.layers = [short(layer) for layer in self.layers]
        self.values = [(f, v, short(w)) for f, v, w in self.values]
        self.steering = [(k, t, short(w)) for k, t, w in self.steering]
        self.supervisors = [(f, v, short(w)) for f, v, w in self.supervisors]
        self.root = str(root)
        return self

    def as_json(self) -> dict[str, Any]:
        return {
            "role": self.role_id, "organizations_folder": self.root, "organization": self.organization, "project": self.project,
            "layers": self.layers,
            "values": [{"field": f, "value": v, "from": w} for f, v, w in self.values],
            "steering": [{"key": k, "text": t, "from": w} for k, t, w in self.steering],
            "supervisors": [{"field": f, "value": v, "from": w} for f, v, w in self.supervisors],
        }

    def lines(self) -> list[str]:
        where = f" in project {self.project}" if self.project else ""
        out = [f"role {self.role_id}{where}, organization {self.organization or '(none active)'}, in {self.root}",
               "layers, lowest first: " + "; ".join(self.layers), ""]
        width = max((len(f.split(".", 1)[-1]) for f, _, _ in self.values), default=0)
        section = None
        for name, value, source in self.values:
            if name.split(".")[0] != section:
                section = name.split(".")[0]
                out.append(f"{section}:")
            out.append(f"  {name.split('.', 1)[-1]:<{width}}  {json.dumps(value)}  ({source})")
        out += ["", "steering texts:"]
        out += [f"  {key}: {text}  ({source})" for key, text, source in self.steering]
        if self.supervisors:
            out += ["", "LLM supervisors (supervisors.yaml):"]
            named = max(len(name) for name, _, _ in self.supervisors)
            out += [f"  {name:<{named}}  {json.dumps(value)}  ({source})" for name, value, source in self.supervisors]
        return out


def _leaves(value: Any, prefix: tuple) -> list[tuple[tuple, Any]]:
    if isinstance(value, dict) and value:
        return [leaf for key, item in value.items() for leaf in _leaves(item, prefix + (key,))]
    return [(prefix, value)]


def _field(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def active_organization(layout: OrganizationLayout) -> tuple[str | None, Path | None]:
    if not layout.active_file.is_file():
        return None, None
    org_id = loading.load(ActiveOrganization, layout.active_file).org_id
    return org_id, layout.organization_file(org_id)


def explain(root: Path, role_id: str, project: str | None = None) -> Explanation:
    """:class:`DocumentError` when the role cannot be resolved, naming the file and line."""
    layout = OrganizationLayout(root)
    org_id, org_path = active_organization(layout)
    resolved = cascade.resolve_role(layout, role_id, org_path if org_path and org_path.is_file() else None, project)
    data = resolved.role.model_dump(mode="json")
    values = []
    for section in SECTIONS:
        for path, value in _leaves(data[section], (section,)):
            layer = resolved.origins.get(path)  # set by a file exactly there, else the pack's default
            values.append((_field(path), value, layer.where(path) if layer else cascade.PACK_DEFAULT))
    layers = [cascade.PACK_DEFAULT] + [layer.source + (f" ({_field(layer.at)})" if layer.at else "") for layer in resolved.layers]
    shown = Explanation(role_id, org_id, project, layers, values, steering_sources(layout, project), supervisor_sources(root, project))
    return shown.relative_to(root)


def supervisor_sources(root: Path, project: str | None) -> list[tuple[str, Any, str]]:
    """The LLM supervisors' settings for a chat of ``project``: every value, and the file and
    line that set it (the organizations folder's ``supervisors.yaml``, the project's), or the
    pack's default; none when neither file exists."""
    files = Files(root, project)
    if not files.config.is_file() and not (files.project_config and files.project_config.is_file()):
        return []
    config, origins = resolve_config(files.config, files.project_config)
    return [(_field(path), value, layer.where(path) if (layer := origins.get(path)) else cascade.PACK_DEFAULT)
            for path, value in _leaves(config.model_dump(mode="json"), ())]


def steering_sources(layout: OrganizationLayout, project: str | None = None) -> list[tuple[str, str, str]]:
    """Every steering text the supervisor uses, and where it comes from: the pack, or the
    organization's or the project's ``steering.yaml`` (file:line), the last one that sets it."""
    files = [p for p in (layout.steering_file, cascade.project_steering(layout, project)) if p is not None]
    texts = SteeringBook(*files).templates()
    set_in: dict[str, str] = {}
    for path in files:
        try:
            data, lines = loading.parse(path) if path.is_file() else ({}, {})
        except DocumentError:
            continue
        for key, value in (data or {}).items() if isinstance(data, dict) else ():
            if isinstance(value, str) and texts.get(str(key)) == " ".join(value.split()):
                set_in[str(key)] = f"{path}:{lines.get((key,))}" if lines.get((key,)) else str(path)
    return [(key, text, set_in.get(key, cascade.PACK_DEFAULT)) for key, text in texts.items()]


def main(root: Path, role_id: str, project: str | None, as_json: bool) -> int:
    try:
        explanation = explain(root, role_id, project)
    except DocumentError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 1
    except UnsafePathError as exc:
        print(f"a0org explain: {exc}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(explanation.as_json(), indent=2))
    else:
        print("\n".join(explanation.lines()))
    return 0
