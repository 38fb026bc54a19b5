"""The organizations folder: doctrine files, reports, the active organization, and ``supervisors.yaml``.

PyYAML and pydantic are imported only here and lazily: without them these checks
report what they could not validate instead of failing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from org.doctor.report import INFO, OK, PROBLEM, WARNING, Check
from org.install.eras import Tree
from org.install.manifest import ACTIVE_NAME, MANIFEST_NAME, declared_org_id
from org.install.plans import supervisors_in_use


def check_organizations(tree: Tree) -> list[Check]:
    orgs = tree.organizations
    if not orgs.is_dir():
        return [Check("organization", PROBLEM, str(orgs), "the organizations folder is missing", "run install_all.sh")]
    roles = sorted(p.stem for p in (orgs / "roles").glob("*.yaml"))
    templates = sorted(p.stem for p in orgs.glob("*.yaml") if declared_org_id(p.read_text(encoding="utf-8", errors="replace")) == p.stem)
    schemas = sorted(p.name for p in (orgs / "schemas").glob("*.json"))
    details = {"roles": roles, "templates": templates, "schemas": schemas, "manifest": (orgs / MANIFEST_NAME).is_file()}
    summary = (f"{len(roles)} role(s), {len(templates)} organization template(s) ({', '.join(templates) or 'none'}), "
               f"{len(schemas)} schema(s)")
    complete = bool(roles and templates)
    checks = [Check("organization", OK if complete else PROBLEM, str(orgs), summary,
                    "" if complete else "run install_all.sh", details)]
    pending = sorted(str(p.relative_to(orgs)) for p in orgs.rglob("*.new"))
    if pending:
        checks.append(Check("organization", INFO, str(orgs),
                            f"the pack changed files you edited; its versions wait beside yours: {', '.join(pending)}",
                            "merge what you want from each .new file into yours, then delete the .new file"))
    reports = orgs / "reports"
    if not (reports / "archive").is_dir() or not os.access(reports, os.W_OK):
        checks.append(Check("organization", PROBLEM, str(reports),
                            "reports/ or reports/archive/ is missing or not writable, so SALUTE reports cannot be written",
                            "run install_all.sh, or create the folders and make them writable by Agent-Zero"))
    checks.append(check_active(orgs, templates))
    return checks


def check_active(orgs: Path, templates: list[str]) -> Check:
    active = orgs / ACTIVE_NAME
    activate = f"install_all.sh --activate ORG_ID (installed: {', '.join(templates) or 'none'})"
    if not active.exists():
        return Check("organization", WARNING, str(active), "no active organization: the pack does nothing until one is active",
                     f"to switch it on: {activate}")
    validated = _validate_with_contracts(orgs, active)
    if validated is not None:
        return validated
    # fallback without PyYAML/pydantic: the JSON, and that the template exists
    try:
        org_id = json.loads(active.read_text(encoding="utf-8")).get("org_id")
    except (OSError, ValueError, AttributeError) as exc:
        return Check("organization", PROBLEM, str(active), f"not valid JSON ({exc}); the organization kernel stays off", activate)
    template = orgs / f"{org_id}.yaml"
    if not isinstance(org_id, str) or not template.is_file():
        return Check("organization", PROBLEM, str(active),
                     f"names organization {org_id!r}, but {template} does not exist; the kernel stays off", activate)
    return Check("organization", OK, str(active),
                 f"active organization: {org_id} (not validated: the library's dependencies are missing)",
                 details={"org_id": org_id})


def _validate_with_contracts(orgs: Path, active: Path) -> Check | None:
    """Validate the active organization and its roles with the library; None when it cannot be imported."""
    try:
        from org.contracts import ActiveOrganization, Organization
        from org.kernel import cascade, loading
        from org.kernel.paths import OrganizationLayout
    except Exception:
        return None
    fix = "fix the file named in the message (the .schema.json files in schemas/ describe every field)"
    try:
        pointer = loading.load(ActiveOrganization, active)
        org_path = orgs / f"{pointer.org_id}.yaml"
        if not org_path.is_file():
            return Check("organization", PROBLEM, str(active),
                         f"names organization '{pointer.org_id}', but {org_path} does not exist; the kernel stays off",
                         "install_all.sh --activate with an installed template")
        organization = loading.load(Organization, org_path, id_field="org_id")
    except loading.DocumentError as exc:
        return Check("organization", PROBLEM, str(active), f"{_problems(exc)}; the organization kernel stays off", fix)
    problems = []
    for role_id in organization.role_ids():
        try:  # as the kernel loads it: with the roles it extends and the overrides
            cascade.resolve_role(OrganizationLayout(orgs), role_id, org_path)
        except loading.DocumentError as exc:
            problems.append(_problems(exc))
    details = {"org_id": organization.org_id, "roles": organization.role_ids()}
    if problems:
        return Check("organization", PROBLEM, str(active),
                     f"organization {organization.org_id}: role problems: {'; '.join(problems)}", fix, details)
    return Check("organization", OK, str(active),
                 f"active organization: {organization.org_id} ({len(details['roles'])} roles, all valid)", details=details)


def _problems(exc: Exception) -> str:
    return "; ".join(str(p) for p in getattr(exc, "problems", None) or [exc])



def check_llm_supervisors(tree: Tree) -> list[Check]:
    """``supervisors.yaml``: present, valid, and what it switches on (the hooks are checked above)."""
    path = tree.organizations / "supervisors.yaml"
    write_it = "write it (docs/supervisors-llm.md), then run install_all.sh --with-supervisors"
    if not path.is_file():
        if supervisors_in_use(tree):
            return [Check("supervisors", WARNING, str(path), "the LLM supervisors' hooks are installed, but there is no config: they do nothing",
                          write_it)]
        return [Check("supervisors", INFO, str(path), "not configured: the LLM supervisors are off (optional)", write_it)]
    try:
        from org.kernel.loading import DocumentError
        from org.llm.config import read_config
    except Exception as exc:  # the library's dependencies are missing; reported under Library
        return [Check("supervisors", INFO, str(path), f"not validated: {type(exc).__name__}: {exc}")]
    try:
        config = read_config(path)
    except DocumentError as exc:
        return [Check("supervisors", PROBLEM, str(path), f"{_problems(exc)}; the LLM supervisors stay off",
                      "fix the file named in the message (schemas/supervisors_config.schema.json describes every field)")]
    enabled = config.enabled_supervisors()
    if not enabled or config.model is None:
        return [Check("supervisors", INFO, str(path), "valid; every supervisor is switched off")]
    key_env = config.model.api_key_env
    key = ("no key (local endpoint)" if key_env is None else
           f"key from ${key_env} ({'set' if os.environ.get(key_env) else 'not set'} in this shell; Agent-Zero's own environment counts)")
    details = {"enabled": enabled, "model": config.model.model, "base_url": config.model.base_url}
    return [Check("supervisors", OK, str(path),
                  f"valid; {', '.join(enabled)} on {config.model.model} at {config.model.base_url}; {key}", details=details)]
