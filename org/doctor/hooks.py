"""The hooks: installed, current, and loading the way the tree's Agent-Zero loads them; name clashes."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from org.a0.loader import UnloadableFile, extension_classes, kept_class, load_module
from org.doctor.report import INFO, OK, PROBLEM, WARNING, Check
from org.install.contents import HOOKS, KERNEL, LLM_SUPERVISORS, Hook, Pack, sha256_file
from org.install.eras import Tree, find_clashes
from org.install.plans import supervisors_in_use

_MISSING = object()


def installer_for(hook: Hook) -> str:
    if hook.phase == LLM_SUPERVISORS:
        return "install_all.sh --with-supervisors (or A0ORG_INSTALL_COMPONENT=supervisors install_all.sh)"
    return "install_all.sh" if hook.phase == KERNEL else "install_supervisor_loop.sh (or install_all.sh)"


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

    def from_root(name: str, module: ModuleType) -> bool:
        try:
            locations = [getattr(module, "__file__", None) or "", *list(getattr(module, "__path__", None) or [])]
        except Exception:  # a namespace package's path is computed from its parent's, which may be gone
            return (root / name.split(".")[0]).exists()
        return any(location and root in Path(location).resolve().parents for location in locations)

    # decided before any is dropped: a namespace package cannot compute its path without its parent
    dropped = [name for name, module in list(sys.modules.items())
               if module is not None and name != "org" and not name.startswith("org.")  # doctor itself may live under the root
               and from_root(name, module)]
    for name in dropped:
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
    """Load ``path`` through :mod:`org.a0.loader`, catching and recording what Agent-Zero would meet."""
    result = HookLoad()
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):  # keep --json output clean
            module = load_module(path)
    except UnloadableFile as exc:
        return HookLoad(error=str(exc))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a hook must never end the agent
        result.error = f"{type(exc).__name__}: {exc}{_line_in(path, exc)}"
        return result
    result.printed = captured.getvalue()
    subclasses = extension_classes(module, base)
    result.classes = [cls.__name__ for cls in subclasses]
    result.kept = kept_class(subclasses)
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

