"""The organizations folder: doctrine files the user may edit, the manifest that tells
their edits from ours, ``.new`` files beside edited ones, and the active organization."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from org.install import InstallError
from org.install.contents import PACKAGE, Pack, PackFile, read_text, sha256_file
from org.install.steps import Plan, Step, empty_folder_steps, file_step, remove_file, write_file

MANIFEST_NAME = ".a0org-manifest.json"
ACTIVE_NAME = "active.json"
NEW_SUFFIX = ".new"
# the identifier rule of org.contracts.common (not imported: it needs pydantic); a test keeps them equal
ORG_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass
class Manifest:
    """What the pack installed (sha256 by relative path), and which of its versions it has
    already offered as ``.new`` beside a file the user edited: offered once, not at every install."""

    files: dict[str, str] = field(default_factory=dict)
    offered: dict[str, str] = field(default_factory=dict)


def read_manifest(orgs: Path) -> Manifest:
    path = orgs / MANIFEST_NAME
    if not path.is_file():
        return Manifest()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Manifest({str(k): str(v) for k, v in data["files"].items()},
                        {str(k): str(v) for k, v in (data.get("offered") or {}).items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InstallError(
            f"{path} is unreadable ({exc}); it records which files you edited, so it must not be guessed. "
            "Fix or delete it (deleting makes every existing doctrine file count as yours)."
        ) from None


def manifest_bytes(manifest: Manifest, version: str) -> bytes:
    data = {"schema_version": 1, "package": PACKAGE, "pack_version": version, "files": dict(sorted(manifest.files.items())),
            "offered": dict(sorted(manifest.offered.items()))}
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


def doctrine_steps(orgs: Path, pack_files: list[PackFile], manifest: Manifest) -> tuple[list[Step], Manifest]:
    """Steps for roles, organization templates and schemas, and the manifest that results.

    A role or template is replaced only while it is exactly what we installed; an edited
    one (or one we never installed) is kept. The pack's version goes beside it as ``.new``
    only when it has something the user has not seen: it differs from what was installed,
    and was not offered before (a user who merged and deleted the ``.new`` is done).
    """
    steps: list[Step] = []
    result = Manifest(dict(manifest.files), dict(manifest.offered))
    for item in pack_files:
        path = orgs / item.rel
        current = sha256_file(path)
        recorded = manifest.files.get(item.rel)
        ours_untouched = current is None or current == recorded or current == item.sha256
        if ours_untouched or not item.user_editable:
            note = "schema" if not item.user_editable else ("role" if item.rel.startswith("roles/") else "organization template")
            if current is not None and recorded is not None and current != recorded and not item.user_editable:
                note += "; it had local changes, which are replaced (schemas are the pack's)"
            steps.append(file_step(path, item.content, note))
            result.files[item.rel] = item.sha256
            result.offered.pop(item.rel, None)
            steps.extend(_drop_redundant_new(path, item))
            continue
        why = "edited by you" if recorded is not None else "not installed by this pack"
        new_path = path.with_name(path.name + NEW_SUFFIX)
        on_disk = sha256_file(new_path)
        if item.sha256 in (recorded, manifest.offered.get(item.rel)) and on_disk is None:
            seen = "the one you edited" if item.sha256 == recorded else "the one you merged"
            steps.append(Step(path, why, note=f"kept as it is; the pack's version is {seen}"))
            continue
        steps.append(Step(path, why, note="kept as it is"))
        result.offered[item.rel] = item.sha256
        if on_disk == item.sha256:
            steps.append(Step(new_path, "current", note="the pack's version, to compare with yours"))
        else:
            state = "missing" if on_disk is None else "outdated"
            steps.append(Step(
                new_path, state, "write", lambda p=new_path, c=item.content: write_file(p, c), writes=new_path,
                note=f"kept your {path.name}; merge what you need, then delete the .new file",
            ))
    return steps, result


def _drop_redundant_new(path: Path, item: PackFile) -> list[Step]:
    # A .new beside a file that now equals the pack's version says nothing: remove it.
    new_path = path.with_name(path.name + NEW_SUFFIX)
    if sha256_file(new_path) == item.sha256:
        return [Step(new_path, "redundant", "remove", lambda: remove_file(new_path), writes=new_path)]
    return []


def manifest_step(orgs: Path, manifest: Manifest, version: str) -> Step:
    return file_step(orgs / MANIFEST_NAME, manifest_bytes(manifest, version), "which files the pack installed (sha256)")


_ORG_ID_LINE_RE = re.compile(r"^org_id:\s*[\"']?([A-Za-z0-9_-]+)[\"']?\s*(?:#.*)?$", re.MULTILINE)


def declared_org_id(text: str) -> str | None:
    match = _ORG_ID_LINE_RE.search(text)
    return match.group(1) if match else None


def activation_step(orgs: Path, org_id: str, pack_files: list[PackFile]) -> Step:
    if not ORG_ID_RE.match(org_id):
        raise InstallError(
            f"--activate {org_id!r}: not a valid organization id "
            "(lower-case letters, digits, '_' and '-', at most 64, starting with a letter or digit)."
        )
    template = orgs / f"{org_id}.yaml"
    shipped = {item.rel: item for item in pack_files}
    if template.is_file():
        text = read_text(template)
    elif f"{org_id}.yaml" in shipped:
        text = shipped[f"{org_id}.yaml"].content.decode("utf-8")
    else:
        installed = {p.stem for p in orgs.glob("*.yaml") if declared_org_id(read_text(p)) == p.stem}
        templates = {rel[: -len(".yaml")] for rel, item in shipped.items()
                     if "/" not in rel and declared_org_id(item.content.decode("utf-8")) == rel[: -len(".yaml")]}
        known = sorted(installed | templates)
        raise InstallError(
            f"--activate {org_id}: there is no organization template {template}. "
            f"Installed templates: {', '.join(known) or 'none'}."
        )
    declared = declared_org_id(text)
    if declared != org_id:
        raise InstallError(
            f"--activate {org_id}: {template} is not an organization template for '{org_id}' (its org_id is {declared!r})."
        )
    active = orgs / ACTIVE_NAME
    if _active_org_id(active) == org_id:
        return Step(active, "current", note=f"organization {org_id} is active")
    record = {
        "schema_version": 1,
        "org_id": org_id,
        "activated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "activated_by": "install_all.sh",
    }
    content = (json.dumps(record, indent=2) + "\n").encode("utf-8")
    state = "missing" if not active.exists() else "other organization active"
    return Step(active, state, "write", lambda: write_file(active, content), writes=active, note=f"activates {org_id}")


def deactivation_step(orgs: Path) -> Step:
    active = orgs / ACTIVE_NAME
    if not active.exists():
        return Step(active, "current", note="no organization is active")
    state = f"active ({_active_org_id(active) or 'unreadable'})"
    return Step(active, state, "remove (deactivate)", lambda: remove_file(active), writes=active)


def _active_org_id(active: Path) -> str | None:
    try:
        value = json.loads(active.read_text(encoding="utf-8")).get("org_id")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def organization_removal_steps(orgs: Path, pack: Pack | None, plan: Plan) -> list[Step]:
    """Remove what we installed and the user left alone; keep edits and reports, and say so."""
    steps: list[Step] = []
    if not orgs.is_dir():
        return steps
    manifest = read_manifest(orgs)
    shipped = {item.rel: item.sha256 for item in pack.organization_files()} if pack else {}
    for rel in sorted(set(manifest.files) | set(shipped)):
        path = orgs / rel
        current = sha256_file(path)
        if current is None:
            continue
        if current in (manifest.files.get(rel), shipped.get(rel)):
            steps.append(Step(path, "installed by the pack", "remove", lambda p=path: remove_file(p), writes=path))
        else:
            steps.append(Step(path, "edited by you", note="kept"))
            plan.warnings.append(
                f"kept {path}: you edited it (or it was not installed by this pack). Delete it yourself if you no longer need it."
            )
        new_path = path.with_name(path.name + NEW_SUFFIX)
        if new_path.exists() and sha256_file(new_path) in (shipped.get(rel), manifest.offered.get(rel)):
            steps.append(Step(new_path, "the pack's version", "remove", lambda p=new_path: remove_file(p), writes=new_path))
    active = orgs / ACTIVE_NAME
    if active.exists():
        steps.append(Step(active, "active", "remove (deactivate)", lambda: remove_file(active), writes=active))
    manifest_path = orgs / MANIFEST_NAME
    if manifest_path.exists():
        steps.append(Step(manifest_path, "installed", "remove", lambda: remove_file(manifest_path), writes=manifest_path))
    reports = [p for p in (orgs / "reports").rglob("*") if p.is_file()] if (orgs / "reports").is_dir() else []
    if reports:
        plan.warnings.append(f"kept {len(reports)} report file(s) in {orgs / 'reports'}: they are your data.")
    # folders we created go too, once nothing else is left in them
    steps += empty_folder_steps((orgs / "reports" / "archive", orgs / "reports", orgs / "roles", orgs / "schemas", orgs), steps)
    return steps
