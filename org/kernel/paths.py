"""Where the organization lives on disk, and safe paths inside it.

Role, unit and organization ids become file names; everything that builds a path
checks the id and that the result stays inside the organization's folder.
"""

from __future__ import annotations

import os
from functools import cached_property, lru_cache
from pathlib import Path

from org.contracts.common import is_identifier

ENV_HOME = "A0ORG_HOME"
DEFAULT_A0_ROOT = Path("/a0")


class UnsafePathError(ValueError):
    pass


@lru_cache(maxsize=1)
def _a0_root() -> Path:
    """Agent-Zero's base folder, asked from Agent-Zero itself when we run inside it."""
    for module_name in ("helpers.files", "python.helpers.files"):
        try:
            module = __import__(module_name, fromlist=["get_abs_path"])
            return Path(module.get_abs_path(""))
        except Exception:  # not inside Agent-Zero, or another era
            continue
    return DEFAULT_A0_ROOT


def organizations_dir() -> Path:
    """``$A0ORG_HOME``, else ``<Agent-Zero root>/usr/organizations``."""
    configured = os.environ.get(ENV_HOME)
    if configured:
        return Path(configured)
    return _a0_root() / "usr" / "organizations"


def safe_child(base: Path, *parts: str) -> Path:
    """``base/parts...``, refusing any part that is absolute, empty or climbs out of ``base``.

    A lexical check: it runs every turn, and the folder is the user's own, so a symlink
    they placed inside it is theirs to follow.
    """
    for part in parts:
        pieces = part.replace("\\", "/").split("/")
        if not part or os.path.isabs(part) or any(piece in ("", ".", "..") for piece in pieces):
            raise UnsafePathError(f"{part!r} is not a plain name inside {base}")
    return base.joinpath(*parts)


def checked_id(value: object, what: str) -> str:
    if not is_identifier(value):
        raise UnsafePathError(f"{what} {value!r} is not a valid id (lower-case letters, digits, '_' and '-', at most 64)")
    return value  # type: ignore[return-value]


class OrganizationLayout:
    """The files of one organizations folder."""

    def __init__(self, root: Path):
        self.root = root
        self._latest: dict[str, Path] = {}  # role id -> its latest report: asked for at every radio check

    @property
    def active_file(self) -> Path:
        return self.root / "active.json"

    @property
    def reports_dir(self) -> Path:
        return self.root / "reports"

    @property
    def archive_dir(self) -> Path:
        return self.reports_dir / "archive"

    @cached_property
    def steering_file(self) -> Path:
        return self.root / "steering.yaml"

    def organization_file(self, org_id: str) -> Path:
        return safe_child(self.root, checked_id(org_id, "organization id") + ".yaml")

    def role_file(self, role_id: str) -> Path:
        return safe_child(self.root, "roles", checked_id(role_id, "role id") + ".yaml")

    def latest_report(self, role_id: str) -> Path:
        path = self._latest.get(role_id)
        if path is None:
            path = safe_child(self.reports_dir, checked_id(role_id, "role id") + "_latest.json")
            if len(self._latest) < 64:
                self._latest[role_id] = path
        return path

    def archive_report(self, role_id: str, stamp: str) -> Path:
        return safe_child(self.archive_dir, f"{checked_id(role_id, 'role id')}_{stamp}.json")
