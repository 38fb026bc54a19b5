"""What the a0_org_kernel plugin's settings screen in Agent-Zero shows: the active organization
and the doctrine of each of its roles, as the pack reads them from the organizations folder.

Agent-Zero asks the plugin's ``hooks.py`` (written by the installer) for the plugin's
configuration when the screen opens; that file calls :func:`settings_view`. The screen is
read-only: the doctrine lives in ``usr/organizations`` (docs/doctrine.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from org.kernel.log import logger

MAX_VALUE_CHARS = 200


def settings_view(orgs: Path | None = None) -> dict[str, Any]:
    """A JSON-ready summary; never raises (a failure becomes the ``message`` shown)."""
    try:
        from org.kernel.paths import organizations_dir

        return _view(orgs or organizations_dir())
    except Exception as exc:  # the settings screen must open whatever the files hold
        logger.warning("plugin settings view failed: %s: %s", type(exc).__name__, exc)
        return {"state": "error", "message": f"{type(exc).__name__}: {exc}", "folder": str(orgs or ""), "roles": []}


def _view(orgs: Path) -> dict[str, Any]:
    from org.contracts import ActiveOrganization, Organization, RoleProfile
    from org.kernel import loading

    view: dict[str, Any] = {"state": "off", "folder": str(orgs), "org_id": "", "org_name": "", "default_role": "",
                            "activated_at": "", "roles": []}
    active = orgs / "active.json"
    if not active.is_file():
        view["message"] = f"No active organization ({active} does not exist): the pack does nothing."
        return view
    try:
        pointer = loading.load(ActiveOrganization, active)
        organization = loading.load(Organization, orgs / f"{pointer.org_id}.yaml", id_field="org_id")
    except loading.DocumentError as exc:
        view.update(state="invalid", message=f"{exc}: the pack does nothing until it is fixed.")
        return view
    view.update(state="active", org_id=organization.org_id, org_name=organization.org_name,
                default_role=organization.default_role, activated_at=str(pointer.activated_at or ""),
                message=f"{orgs / (organization.org_id + '.yaml')}, activated {pointer.activated_at or 'at an unknown time'}.")
    for role_id in organization.role_ids():
        path = orgs / "roles" / f"{role_id}.yaml"
        entry: dict[str, Any] = {"role_id": role_id, "role_name": role_id, "file": str(path), "error": "", "doctrine": []}
        try:
            role = loading.load(RoleProfile, path, id_field="role_id")
        except loading.DocumentError as exc:
            entry["error"] = f"{exc}: the kernel skips this role."
        else:
            entry["role_name"] = role.role_name
            entry["doctrine"] = [{"name": name, "value": _shown(value)}
                                 for name, value in role.doctrine.model_dump(mode="json").items()]
        view["roles"].append(entry)
    return view


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"
