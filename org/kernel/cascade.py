"""One cascade for a role: every document that gives it a value, merged in order, and where
each value came from.

Lowest first (docs/doctrine.md#inheritance-and-overrides):

1. the pack's defaults (each field's default in the contract);
2. the organization's ``role_defaults`` (``<org_id>.yaml``), for every role of it;
3. the role's ``extends`` chain, the farthest ancestor first, the role's own file last;
4. the user's ``overrides.yaml`` in the organizations folder: ``every_role``, then ``roles.<role_id>``;
5. for a chat in an Agent-Zero project, ``projects/<project>/overrides.yaml``, the same way.

Steering texts cascade the same way: the pack's, the organization's ``steering.yaml``, a
project's ``projects/<project>/steering.yaml`` (org/supervisor/steering.py reads them).

Merge rules, the same at every step: mappings merge key by key; lists and scalars replace;
``null`` removes the entry given below, so the pack's default applies to it again.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from org.contracts import OrganizationOverrides, RoleProfile

from . import loading
from .loading import DocumentError, Problem
from .paths import OrganizationLayout, UnsafePathError, checked_id, safe_child

PACK_DEFAULT = "pack default"
OVERRIDES_NAME = "overrides.yaml"
STEERING_NAME = "steering.yaml"
PROJECTS_FOLDER = "projects"
#: Longer chains are refused: a doctrine is read every turn, and nobody needs ten levels.
MAX_CHAIN = 8


@dataclass(frozen=True)
class Layer:
    """One document's part in the cascade: its data, and where in the file that data sits."""

    source: str
    data: dict[str, Any]
    lines: dict[tuple, int] = field(default_factory=dict, repr=False)
    at: tuple = ()

    def line(self, path: tuple) -> int | None:
        return loading.nearest_line(self.lines, self.at + path)

    def where(self, path: tuple) -> str:
        line = self.line(path)
        return f"{self.source}:{line}" if line else self.source


def merge(layers: list[Layer]) -> tuple[dict[str, Any], dict[tuple, Layer]]:
    """The layers merged, lowest first, and for every path set the layer that set it."""
    result: dict[str, Any] = {}
    origins: dict[tuple, Layer] = {}
    for layer in layers:
        _merge_into(result, layer.data, (), layer, origins)
    return result, origins


def _merge_into(target: dict, overlay: dict, path: tuple, layer: Layer, origins: dict[tuple, Layer]) -> None:
    for key, value in overlay.items():
        here = path + (key,)
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            origins.setdefault(here, layer)
            _merge_into(target[key], value, here, layer, origins)
            continue
        for known in [p for p in origins if p[: len(here)] == here]:
            del origins[known]
        if value is None:
            target.pop(key, None)  # removed: what lies below decides again
            continue
        target[key] = copy.deepcopy(value)
        origins[here] = layer
        if isinstance(value, dict):
            for sub in _paths(value, here):
                origins[sub] = layer


def _paths(value: dict, prefix: tuple) -> list[tuple]:
    out = []
    for key, item in value.items():
        out.append(prefix + (key,))
        if isinstance(item, dict):
            out.extend(_paths(item, prefix + (key,)))
    return out


def origin_of(origins: dict[tuple, Layer], path: tuple) -> Layer | None:
    """The layer that set ``path`` (or the nearest mapping around it); None: the pack's default."""
    while path:
        if path in origins:
            return origins[path]
        path = path[:-1]
    return None


# --------------------------------------------------------------------------- the documents


def document(path: Path) -> tuple[dict[str, Any], dict[tuple, int]]:
    data, lines = loading.parse(path)
    if data is None:
        raise DocumentError([Problem(str(path), None, "", "the file is empty")])
    if not isinstance(data, dict):
        raise DocumentError([Problem(str(path), None, "", "Input should be a valid dictionary (a mapping of fields)")])
    return data, lines


def role_chain(roles_dir: Path, role_id: str) -> list[Layer]:
    """``roles/<role_id>.yaml`` and the roles it ``extends``, the farthest ancestor first."""
    chain: list[Layer] = []
    names: list[str] = []
    current, asked_by = role_id, None
    while current is not None:
        if current in names or len(names) >= MAX_CHAIN:
            what = "goes round in a circle" if current in names else f"is longer than {MAX_CHAIN} roles"
            raise DocumentError([Problem(asked_by.source, asked_by.line(("extends",)), "extends",
                                         f"the chain {' -> '.join([*names, current])} {what}")])
        try:
            path = safe_child(roles_dir, checked_id(current, "role id") + ".yaml")
        except UnsafePathError as exc:
            raise DocumentError([Problem(asked_by.source if asked_by else str(roles_dir), asked_by.line(("extends",)) if asked_by else None,
                                         "extends", str(exc))]) from None
        if asked_by is not None and not path.is_file():
            raise DocumentError([Problem(asked_by.source, asked_by.line(("extends",)), "extends",
                                         f"no role '{current}' to extend ({path} does not exist)")])
        data, lines = document(path)
        layer = Layer(str(path), data, lines)
        chain.append(layer)
        names.append(current)
        parent = data.get("extends")
        if parent is not None and not isinstance(parent, str):
            raise DocumentError([Problem(layer.source, layer.line(("extends",)), "extends", "expected a role id")])
        current, asked_by = parent, layer
    return chain[::-1]


def overrides_layers(path: Path, role_id: str) -> list[Layer]:
    """The ``every_role`` and ``roles.<role_id>`` parts of an overrides file (none when it is absent)."""
    if not path.is_file():
        return []
    data, lines = document(path)
    loading.validate(OrganizationOverrides, data, path, lines)
    layers = []
    if isinstance(data.get("every_role"), dict):
        layers.append(Layer(str(path), data["every_role"], lines, ("every_role",)))
    roles = data.get("roles")
    if isinstance(roles, dict) and isinstance(roles.get(role_id), dict):
        layers.append(Layer(str(path), roles[role_id], lines, ("roles", role_id)))
    return layers


def project_overrides(layout: OrganizationLayout, project: str) -> Path:
    return safe_child(layout.root, PROJECTS_FOLDER, project, OVERRIDES_NAME)


def project_steering(layout: OrganizationLayout, project: str | None) -> Path | None:
    """``projects/<project>/steering.yaml``: a project's own wording, over the organization's."""
    if project is None:
        return None
    try:
        return safe_child(layout.root, PROJECTS_FOLDER, project, STEERING_NAME)
    except UnsafePathError:
        return None


def organization_layer(org_path: Path) -> Layer | None:
    data, lines = document(org_path)
    defaults = data.get("role_defaults")
    return Layer(str(org_path), defaults, lines, ("role_defaults",)) if isinstance(defaults, dict) and defaults else None


@dataclass
class ResolvedRole:
    role: RoleProfile
    origins: dict[tuple, Layer]
    layers: list[Layer]

    @property
    def files(self) -> list[Path]:
        return list(dict.fromkeys(Path(layer.source) for layer in self.layers))


def resolve_role(layout: OrganizationLayout, role_id: str, org_path: Path | None = None,
                 project: str | None = None, roles_dir: Path | None = None) -> ResolvedRole:
    """The role as every layer makes it, validated; :class:`DocumentError` names the file and
    line each wrong value came from. ``roles_dir`` defaults to the layout's ``roles/``."""
    layers: list[Layer] = []
    if org_path is not None:
        layer = organization_layer(org_path)
        layers.extend([layer] if layer else [])
    chain = role_chain(roles_dir or layout.root / "roles", role_id)
    layers.extend(chain)
    layers.extend(overrides_layers(layout.root / OVERRIDES_NAME, role_id))
    if project is not None:
        layers.extend(overrides_layers(project_overrides(layout, project), role_id))
    data, origins = merge(layers)
    own = chain[-1].data.get("role_id")  # a role's id is its own, never inherited
    if own is None:
        data.pop("role_id", None)
        origins.pop(("role_id",), None)
    else:
        data["role_id"] = own

    def locate(path: tuple) -> tuple[str, int | None]:
        layer = origin_of(origins, path) or chain[-1]
        return layer.source, layer.line(path)

    role = loading.validate_located(RoleProfile, data, locate)
    loading.check_named_for_file(role.role_id, "role_id", chain[-1].source, chain[-1].lines)
    return ResolvedRole(role, origins, layers)
