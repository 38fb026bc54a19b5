"""The active organization: ``active.json``, the organization it names and its roles.

Loading is cached. ``active.json`` is only stat-ed each turn (its absence switches the
pack off); the organization and role files are re-checked for edits at most once a
second, so a user editing a doctrine sees it applied within a turn or two.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from org.contracts import ActiveOrganization, Organization, RoleProfile

from . import cascade, loading
from .log import forget_logged_about, warn_once
from .paths import ENV_HOME, OrganizationLayout, UnsafePathError, organizations_dir

RECHECK_SECONDS = 1.0


@dataclass
class LoadedOrganization:
    organization: Organization
    roles: dict[str, RoleProfile]
    layout: OrganizationLayout
    org_path: Path | None = None
    #: project -> its roles, with the project's overrides (the same dict as ``roles`` without any)
    projects: dict[str, dict[str, RoleProfile]] = field(default_factory=dict)
    #: each role as a plain dict, handed to other layers as ``agent._org_active_role``; keyed by
    #: the role object's id, which lives as long as this organization holds it
    _dicts: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)

    def role_dict(self, role: RoleProfile) -> dict[str, Any]:
        key = id(role)
        if key not in self._dicts:
            self._dicts[key] = role.model_dump(mode="json")
        return self._dicts[key]


def _stamp(path: Path) -> tuple[str, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (str(path), st.st_mtime_ns, st.st_size)


class OrganizationStore:
    """Loads and caches the organization that ``active.json`` names."""

    def __init__(self, root: Path | None = None):
        self._root = root
        self._active_stamp: tuple[str, int, int] | None = None
        self._file_stamps: dict[Path, tuple[str, int, int] | None] = {}
        self._loaded: LoadedOrganization | None = None
        self._checked_at = 0.0
        self._layout: tuple[str | None, OrganizationLayout] | None = None

    @property
    def layout(self) -> OrganizationLayout:
        """The organizations folder's layout; the same object while ``$A0ORG_HOME`` stays the same
        (the hooks ask for it several times a turn, and it keeps the paths it made)."""
        if self._root is not None:
            key = None
        else:
            key = os.environ.get(ENV_HOME)
        if self._layout is None or self._layout[0] != key:
            self._layout = (key, OrganizationLayout(self._root if self._root is not None else organizations_dir()))
        return self._layout[1]

    def active(self) -> LoadedOrganization | None:
        """The active organization, or None when none is (or it cannot be loaded)."""
        layout = self.layout
        stamp = _stamp(layout.active_file)
        if stamp is None:
            self._forget()
            return None
        now = time.monotonic()
        if stamp == self._active_stamp and (now - self._checked_at) < RECHECK_SECONDS:
            return self._loaded
        if stamp == self._active_stamp and self._loaded is not None and not self._files_changed():
            self._checked_at = now
            return self._loaded
        self._active_stamp = stamp
        self._checked_at = now
        self._loaded = self._load(layout)
        return self._loaded

    def _forget(self) -> None:
        self._active_stamp = None
        self._loaded = None
        self._file_stamps = {}

    def _files_changed(self) -> bool:
        return any(_stamp(path) != stamp for path, stamp in self._file_stamps.items())

    def _load(self, layout: OrganizationLayout) -> LoadedOrganization | None:
        self._file_stamps = {}
        try:
            active = loading.load(ActiveOrganization, layout.active_file)
            org_path = layout.organization_file(active.org_id)
            self._file_stamps[org_path] = _stamp(org_path)
            if not org_path.exists():
                warn_once(f"{layout.active_file}: org_id: names '{active.org_id}', but {org_path} does not exist; the organization kernel stays off")
                return None
            organization = loading.load(Organization, org_path, id_field="org_id")
        except loading.DocumentError as exc:
            for problem in exc.problems:
                warn_once(f"{problem}; the organization kernel stays off until this is fixed")
            return None
        except UnsafePathError as exc:
            warn_once(f"{layout.active_file}: org_id: {exc}; the organization kernel stays off")
            return None

        overrides = layout.root / cascade.OVERRIDES_NAME
        self._file_stamps[overrides] = _stamp(overrides)
        roles = self._resolve_all(layout, organization.role_ids(), org_path, None)
        if organization.default_role not in roles:
            warn_once(
                f"{org_path}: default_role: role '{organization.default_role}' "
                "could not be loaded; the organization kernel stays off"
            )
            return None
        for path in (layout.active_file, *self._file_stamps):
            forget_logged_about(str(path))
        return LoadedOrganization(organization=organization, roles=roles, layout=layout, org_path=org_path)

    def _resolve_all(self, layout: OrganizationLayout, role_ids: list[str], org_path: Path | None,
                     project: str | None) -> dict[str, RoleProfile]:
        """The roles through their cascades, those that cannot be used left out. Each problem is
        logged once, with every role it keeps out (a mistake in a role others extend keeps
        them all out), and every file of a cascade is watched for edits."""
        roles: dict[str, RoleProfile] = {}
        skipped: dict[str, list[str]] = {}
        for role_id in role_ids:
            role_path = layout.role_file(role_id)
            self._file_stamps.setdefault(role_path, _stamp(role_path))
            try:
                resolved = cascade.resolve_role(layout, role_id, org_path, project)
            except loading.DocumentError as exc:
                for problem in exc.problems:
                    skipped.setdefault(str(problem), []).append(role_id)
                continue
            for path in resolved.files:
                self._file_stamps.setdefault(path, _stamp(path))
            roles[role_id] = resolved.role
        for problem, ids in skipped.items():
            who = f"role '{ids[0]}' is" if len(ids) == 1 else f"roles {', '.join(repr(i) for i in ids)} are"
            warn_once(f"{problem}; {who} skipped until this is fixed")
        return roles

    def roles_for(self, loaded: LoadedOrganization, project: str | None) -> dict[str, RoleProfile]:
        """The roles of a chat in ``project``: with that project's ``overrides.yaml``, if it has one."""
        if project is None:
            return loaded.roles
        if project not in loaded.projects:
            try:
                path = cascade.project_overrides(loaded.layout, project)
            except UnsafePathError:  # a project name that is no plain folder name has no overrides
                loaded.projects[project] = loaded.roles
                return loaded.roles
            self._file_stamps.setdefault(path, _stamp(path))
            if not path.is_file():
                loaded.projects[project] = loaded.roles
            else:
                loaded.projects[project] = self._resolve_all(loaded.layout, list(loaded.roles), loaded.org_path, project)
        return loaded.projects[project]


def select_role(loaded: LoadedOrganization, bst_domain: str | None, roles: dict[str, RoleProfile] | None = None) -> RoleProfile:
    """The role for the current domain: routing table first, then role capabilities, then the default."""
    roles = loaded.roles if roles is None else roles
    if bst_domain:
        for role_id in loaded.organization.domain_routing.get(bst_domain, ()):
            if role_id in roles:
                return roles[role_id]
        rank = {"specialist": 0, "executive": 1, "commander": 2}
        candidates = [r for r in roles.values() if bst_domain in r.capabilities.bst_domains]
        if candidates:
            return min(candidates, key=lambda r: rank[r.role_type])
    return roles.get(loaded.organization.default_role) or loaded.roles[loaded.organization.default_role]
