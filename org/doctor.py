"""``a0org doctor``: prove that every piece of the pack is in place and loads.

Run it inside the container with Agent-Zero's Python (``/opt/venv-a0/bin/a0org doctor``).
An import check alone is not enough: Agent-Zero loads extension files with
``spec_from_file_location`` + ``exec_module`` and the hooks swallow a failed library
import on purpose (so the agent keeps working), which makes "not running" look like
"healthy". So doctor loads each installed hook exactly the way the era's loader does,
against the tree's real ``Extension`` base class, and reads the hook's
``ORG_IMPORT_ERROR``.

Exit code: 0 when everything needed is installed and loads, 1 otherwise. Every
problem says what to do about it. PyYAML and pydantic are only imported lazily, for
validating the active organization; without them doctor reports instead of crashing.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import os
import sys
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

from org.install import InstallError
from org.install.contents import HOOKS, KERNEL, LLM_SUPERVISORS, PACKAGE, Hook, Pack, find_pack_dir, sha256_file
from org.install.eras import DEFAULT_A0_ROOT, Tree, detect_tree, find_clashes
from org.install.manifest import ACTIVE_NAME, MANIFEST_NAME, declared_org_id
from org.install.plans import supervisors_in_use

OK, INFO, WARNING, PROBLEM = "ok", "info", "warning", "problem"
_MISSING = object()


@dataclass
class Check:
    topic: str
    level: str
    subject: str
    message: str
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    a0_root: str
    era: str | None = None
    era_versions: str | None = None
    version: str | None = None
    hook_dir: str | None = None
    pack_dir: str | None = None
    checks: list[Check] = field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.level == PROBLEM]

    def add(self, *checks: Check) -> None:
        self.checks.extend(checks)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["problems"] = len(self.problems)
        data["ok"] = not self.problems
        return data


def installer_for(hook: Hook) -> str:
    if hook.phase == LLM_SUPERVISORS:
        return "install_all.sh --with-supervisors (or A0ORG_INSTALL_COMPONENT=supervisors install_all.sh)"
    return "install_all.sh" if hook.phase == KERNEL else "install_supervisor_loop.sh (or install_all.sh)"


# --------------------------------------------------------------------------- hooks


def import_base_class(tree: Tree) -> tuple[type | None, str | None]:
    """The era's real ``Extension`` class, imported from the tree the way Agent-Zero does."""
    root = str(tree.root)
    if root not in sys.path:
        sys.path.insert(0, root)
    module_name = tree.era.base_module
    errors: list[str] = []
    # Some versions (v0.9.9.0) have an import cycle that only resolves in Agent-Zero's own
    # order, where agent.py is imported first; so that is the second try.
    for prelude in ((), ("agent",)):
        _forget_modules_from(tree.root)
        try:
            for name in prelude:
                importlib.import_module(name)
            module = importlib.import_module(module_name)
            break
        except Exception as exc:  # a broken or foreign tree: report, do not crash
            first = f" after importing {', '.join(prelude)}.py" if prelude else ""
            errors.append(f"importing {module_name}{first} failed: {type(exc).__name__}: {exc}")
    else:
        return None, f"cannot import {module_name} from {root}: " + "; ".join(errors)
    origin = Path(getattr(module, "__file__", "") or "").resolve()
    if tree.root.resolve() not in origin.parents:
        return None, f"{module_name} was imported from {origin}, not from {root} (another package of that name is on sys.path)"
    base = getattr(module, "Extension", None)
    if not isinstance(base, type):
        return None, f"{module_name} ({origin}) has no Extension class"
    return base, None


def _forget_modules_from(root: Path) -> None:
    """Drop modules (partly) imported from ``root`` so a retry starts clean."""
    root = root.resolve()

    def from_root(module: ModuleType) -> bool:
        locations = [getattr(module, "__file__", None) or "", *list(getattr(module, "__path__", None) or [])]
        return any(location and root in Path(location).resolve().parents for location in locations)

    for name, module in list(sys.modules.items()):
        ours = name == "org" or name.startswith("org.")  # doctor itself may live under the root
        if module is not None and not ours and from_root(module):
            del sys.modules[name]


@dataclass
class HookLoad:
    error: str | None = None
    classes: list[str] = field(default_factory=list)
    kept: type | None = None
    org_import_error: Any = _MISSING
    printed: str = ""
    foreign_base: str | None = None


def load_like_agent_zero(path: Path, base: type) -> HookLoad:
    """Execute ``path`` as Agent-Zero's loader does: under its bare name, not put in sys.modules."""
    result = HookLoad()
    captured = io.StringIO()
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            return HookLoad(error=f"Python cannot load {path} as a module")
        module = importlib.util.module_from_spec(spec)
        with contextlib.redirect_stdout(captured):  # keep --json output clean
            spec.loader.exec_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a hook must never end the agent
        result.error = f"{type(exc).__name__}: {exc}{_line_in(path, exc)}"
        return result
    result.printed = captured.getvalue()
    # inspect.getmembers is sorted by name; the loader walks it backwards and keeps the
    # first subclass, i.e. the alphabetically last one.
    subclasses = [cls for _, cls in inspect.getmembers(module, inspect.isclass) if cls is not base and issubclass(cls, base)]
    result.classes = [cls.__name__ for cls in subclasses]
    result.kept = subclasses[-1] if subclasses else None
    result.org_import_error = getattr(module, "ORG_IMPORT_ERROR", _MISSING)
    if not subclasses:
        result.foreign_base = _foreign_extension_base(module, base)
    return result


def _line_in(path: Path, exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f" (line {frames[-1].lineno})" if frames else ""


def _foreign_extension_base(module: ModuleType, base: type) -> str | None:
    """The module of an ``Extension`` class the hook subclasses instead of the tree's own."""
    for _, cls in inspect.getmembers(module, inspect.isclass):
        for ancestor in cls.__mro__[1:]:
            if ancestor.__name__ == "Extension" and ancestor is not base:
                return ancestor.__module__
    return None


def check_hook(tree: Tree, hook: Hook, pack: Pack | None, base: type | None) -> Check:
    path = tree.hook_path(hook)
    if not tree.supports(hook):
        return Check("hook", INFO, hook.label,
                     f"not installed: this Agent-Zero has no {hook.point} extension point (added in v0.9.5)")
    if not path.is_file() and hook.phase == LLM_SUPERVISORS and not supervisors_in_use(tree):
        return Check("hook", INFO, hook.label, "not installed: the LLM supervisors are off (optional)",
                     "to use them: write supervisors.yaml (docs/supervisors-llm.md) and run install_all.sh again")
    if not path.is_file():
        return Check("hook", PROBLEM, hook.label, f"not installed: {path} is missing", f"run {installer_for(hook)}")
    check = _currency(hook, path, pack)
    if base is None:
        check.message = f"{check.message}; load not checked (see the base class problem)"
        return check
    return _loading(tree, hook, path, base, check)


def _currency(hook: Hook, path: Path, pack: Pack | None) -> Check:
    """OK (or a warning when it differs from the pack's copy); the load check adds to it."""
    check = Check("hook", OK, hook.label, "installed", details={"path": str(path), "current": None})
    source = pack.hook_source(hook) if pack else None
    if source is None or not source.is_file():
        check.message = "installed (no pack to compare with)"
        return check
    current = sha256_file(path) == sha256_file(source)
    check.details["current"] = current
    check.message = "current" if current else f"differs from the pack's copy {source}"
    if not current:
        check.level, check.fix = WARNING, f"run {installer_for(hook)} to update it"
    return check


def _loading(tree: Tree, hook: Hook, path: Path, base: type, check: Check) -> Check:
    restore = f"run {installer_for(hook)} to restore the pack's copy"
    load = load_like_agent_zero(path, base)
    check.details.update(classes=load.classes, printed_on_load=load.printed or None)

    def problem(message: str, fix: str) -> Check:
        check.level, check.message, check.fix = PROBLEM, f"{path}: {message}", fix
        return check

    if load.error:
        return problem(f"fails to load: {load.error}; Agent-Zero fails the same way at this point",
                       f"{restore}; if it persists, report it with this message")
    wrong_class = _class_problem(tree, load)
    if wrong_class:
        return problem(wrong_class, restore if not load.foreign_base else f"{restore}; it must import {tree.era.base_module}")
    kept = load.kept
    assert kept is not None
    is_async = inspect.iscoroutinefunction(kept.execute)
    check.details.update({"class": kept.__name__, "execute_async": is_async})
    check.message += f"; loads: class {kept.__name__}, execute is {'async' if is_async else 'sync'}"
    if load.org_import_error is _MISSING:
        return problem("defines no ORG_IMPORT_ERROR, so a failed library import would go unseen", restore)
    check.details["org_import_error"] = load.org_import_error
    if load.org_import_error is not None:
        return problem(f"loads, but its library import failed: {load.org_import_error}; the hook does nothing",
                       "install the library into Agent-Zero's Python (install_all.sh without --no-library), "
                       "then restart Agent-Zero")
    check.message += "; library imported"
    return check


def _class_problem(tree: Tree, load: HookLoad) -> str | None:
    """What stops Agent-Zero from running the hook's class, if anything."""
    if not load.classes and load.foreign_base:
        return (f"its class subclasses Extension from {load.foreign_base}, not from {tree.era.base_module}, "
                "so Agent-Zero finds no extension in it")
    if not load.classes:
        return "defines no Extension subclass, so Agent-Zero skips it"
    if len(load.classes) > 1:
        return (f"defines {len(load.classes)} Extension subclasses ({', '.join(load.classes)}); "
                f"Agent-Zero runs only {load.classes[-1]}")
    if tree.era.awaits_execute and not inspect.iscoroutinefunction(load.kept.execute):  # type: ignore[union-attr]
        return f"{load.classes[0]}.execute is not async, but Agent-Zero {tree.era.versions} awaits it, so every call fails"
    return None


def check_hooks(tree: Tree, pack: Pack | None) -> list[Check]:
    base, error = import_base_class(tree)
    checks = []
    if error:
        checks.append(Check("hook", PROBLEM, "Extension base class", f"{error}; cannot prove the hooks load",
                            "run doctor with Agent-Zero's own Python inside the container (/opt/venv-a0/bin/a0org doctor)"))
    checks += [check_hook(tree, hook, pack, base) for hook in HOOKS]
    return checks


def check_clashes(tree: Tree) -> list[Check]:
    checks = [
        Check("clash", PROBLEM if clash.hides_ours else WARNING, clash.hook.label, clash.describe(), clash.fix,
              details={"kind": clash.kind, "path": str(clash.path)})
        for clash in find_clashes(tree)
    ]
    return checks or [Check("clash", OK, "name clashes", "no other file shares a name with our hooks")]


# --------------------------------------------------------------------------- library


def check_library() -> list[Check]:
    import org

    location = Path(org.__file__).resolve().parent
    try:
        from importlib import metadata

        dist_version: str | None = metadata.version(PACKAGE)
    except Exception:
        dist_version = None
    version = getattr(org, "__version__", None)
    details = {"version": version, "location": str(location), "distribution": dist_version}
    if dist_version is None:
        checks = [Check("library", WARNING, "org",
                        f"org {version} is imported from {location}, but {PACKAGE} is not installed in "
                        f"{sys.executable}; Agent-Zero will not find it",
                        "run install_all.sh (it pip-installs the library into Agent-Zero's Python)", details)]
    else:
        checks = [Check("library", OK, "org", f"org {version} ({PACKAGE} {dist_version}) from {location}", details=details)]
    try:
        importlib.import_module("org.a0.hooks")
    except Exception as exc:  # a missing dependency is the usual cause
        checks.append(Check("library", PROBLEM, "org.a0.hooks", f"cannot import org.a0.hooks: {type(exc).__name__}: {exc}",
                            "install the library with its dependencies: run install_all.sh, "
                            f"or `{sys.executable} -m pip install --upgrade <pack folder>`"))
    return checks


# --------------------------------------------------------------------------- organizations


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
                            f"the pack's newer versions wait beside your edited files: {', '.join(pending)}",
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
        from org.contracts import ActiveOrganization, Organization, RoleProfile
        from org.kernel import loading
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
        organization = loading.load(Organization, org_path)
    except loading.DocumentError as exc:
        return Check("organization", PROBLEM, str(active), f"{_problems(exc)}; the organization kernel stays off", fix)
    problems = []
    for role_id in organization.role_ids():
        try:
            loading.load(RoleProfile, orgs / "roles" / f"{role_id}.yaml")
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


# --------------------------------------------------------------------------- LLM supervisors


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


# --------------------------------------------------------------------------- report


def diagnose(a0_root: Path, pack_dir: Path | None = None) -> Report:
    report = Report(a0_root=str(a0_root))
    try:
        tree = detect_tree(a0_root)
    except InstallError as exc:
        report.add(Check("tree", PROBLEM, str(a0_root), str(exc),
                         "pass --a0-root with Agent-Zero's folder (in the Docker image: /a0)"))
        return report
    found_pack = find_pack_dir(pack_dir)
    pack = Pack(found_pack) if found_pack else None
    report.era, report.era_versions, report.version = tree.era.code, tree.era.versions, tree.version
    report.hook_dir = tree.era.hook_dir_pattern.format(point="<point>")
    report.pack_dir = str(found_pack) if found_pack else None
    report.add(*check_hooks(tree, pack))
    report.add(*check_clashes(tree))
    report.add(*check_llm_supervisors(tree))
    report.add(*check_library())
    report.add(*check_organizations(tree))
    return report


_TOPICS = {"tree": "Agent-Zero", "hook": "Hooks", "clash": "Name clashes", "library": "Library", "organization": "Organization",
           "supervisors": "LLM supervisors"}


def render(report: Report) -> str:
    lines = [f"a0org doctor: Agent-Zero at {report.a0_root}"]
    if report.era:
        lines.append(f"  era {report.era} ({report.era_versions}), version {report.version}; hooks in {report.hook_dir}/")
        lines.append(f"  pack: {report.pack_dir or 'not found, so hooks are not compared with it (pass --pack-dir)'}")
    for topic, title in _TOPICS.items():
        checks = [c for c in report.checks if c.topic == topic]
        if not checks:
            continue
        lines.append(f"\n{title}")
        for check in checks:
            lines.append(f"  {check.level.upper():<8} {check.subject}: {check.message}")
            if check.fix and check.level != OK:
                lines.append(f"  {'':<8} fix: {check.fix}")
    warnings = sum(c.level == WARNING for c in report.checks)
    problems = len(report.problems)
    lines.append("")
    lines.append(f"Result: {problems} problem(s), {warnings} warning(s)." if problems else
                 f"Result: everything needed is installed and loads ({warnings} warning(s)).")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--a0-root", type=Path, default=DEFAULT_A0_ROOT, metavar="DIR", help="Agent-Zero's folder (default: /a0)")
    parser.add_argument("--pack-dir", type=Path, metavar="DIR",
                        help="the pack to compare the installed hooks with (default: found automatically)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    """Run with parsed arguments (see :func:`add_arguments`); exit code 0 when nothing is a problem."""
    pack_dir = getattr(args, "pack_dir", None)
    report = diagnose(Path(args.a0_root).expanduser().absolute(), Path(pack_dir) if pack_dir else None)
    if getattr(args, "json", False):
        print(json.dumps(report.as_json(), indent=2, default=str))
    else:
        print(render(report))
    return 1 if report.problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="a0org doctor", description="Check that the pack is installed in Agent-Zero and that every hook loads."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
