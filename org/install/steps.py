"""A plan's steps: what each file or folder is now and what would change; printing and applying them."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from org.install import InstallError
from org.install.contents import COMPONENTS, Hook, Pack, sha256_bytes, sha256_file
from org.install.eras import Tree
from org.kernel.files import atomic_write_bytes, new_file_mode

EXIT_OK = 0
EXIT_NOT_CURRENT = 1


@dataclass
class Step:
    """One file or folder: what it is now (``state``) and what would change (``change``)."""

    subject: Path | str
    state: str
    change: str = ""
    apply: Callable[[], None] | None = None
    #: the path this step creates, replaces or removes; checked for writability first
    writes: Path | None = None
    note: str = ""
    #: shown by --check-only; False for follow-up steps such as clearing __pycache__
    reported: bool = True

    @property
    def changes(self) -> bool:
        return self.apply is not None


@dataclass
class Phase:
    title: str
    steps: list[Step] = field(default_factory=list)


@dataclass
class Plan:
    phases: list[Phase] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hooks_changed: bool = False

    def steps(self) -> list[Step]:
        return [step for phase in self.phases for step in phase.steps]

    def changes(self) -> list[Step]:
        return [step for step in self.steps() if step.changes]


def write_file(path: Path, content: bytes) -> None:
    # A0 v1.x watches extension folders and reloads on change: never let it see half a file.
    # The file gets the permissions a plain write would give it, so Agent-Zero can read it.
    atomic_write_bytes(path, content, new_file_mode())


def remove_file(path: Path) -> None:
    path.unlink(missing_ok=True)


def folder_step(path: Path) -> Step | None:
    if path.is_dir():
        return None
    return Step(path, "missing", "create folder", lambda: path.mkdir(parents=True, exist_ok=True), writes=path)


def file_step(path: Path, content: bytes, what: str) -> Step:
    """Install or replace a file the pack owns outright (hooks, schemas)."""
    current = sha256_file(path)
    if current == sha256_bytes(content):
        return Step(path, "current", note=what)
    state, change = ("missing", "install") if current is None else ("outdated", "update")
    return Step(path, state, change, lambda: write_file(path, content), writes=path, note=what)


def hook_steps(tree: Tree, pack: Pack, hooks: Sequence[Hook], plan: Plan) -> list[Step]:
    steps: list[Step] = []
    changed_dirs: list[Path] = []
    for hook in hooks:
        if not tree.supports(hook):
            plan.warnings.append(
                f"skipped {hook.label}: this Agent-Zero ({tree.version}) has no {hook.point} extension point "
                "(added in v0.9.5); update Agent-Zero and run the installer again to get it."
            )
            continue
        step = file_step(tree.hook_path(hook), pack.hook_source(hook).read_bytes(), f"{hook.phase} hook")
        steps.append(step)
        if step.changes:
            changed_dirs.append(tree.hook_path(hook).parent)
    for folder in dict.fromkeys(changed_dirs):
        steps.extend(pycache_steps(folder))
    plan.hooks_changed = plan.hooks_changed or bool(changed_dirs)
    return steps


def empty_folder_steps(candidates: Sequence[Path], steps: Sequence[Step]) -> list[Step]:
    """Remove each candidate folder (deepest first) that holds nothing but what ``steps`` remove:
    the folders the installer created go with it, a folder with anything else in it stays."""
    removing = {step.writes for step in steps if step.changes}
    removals: list[Step] = []
    for folder in sorted(dict.fromkeys(candidates), key=lambda f: len(f.parts), reverse=True):
        if folder.is_dir() and all(child in removing for child in folder.iterdir()):
            removals.append(Step(folder, "empty folder", "remove", lambda f=folder: f.rmdir(), writes=folder))
            removing.add(folder)
    return removals


def pycache_steps(folder: Path) -> list[Step]:
    # Not needed for correctness (.pyc files are checked against the source's mtime and size),
    # but a copy that keeps an old mtime and the same size would run stale bytecode.
    cache = folder / "__pycache__"
    if not cache.is_dir():
        return []
    return [Step(cache, "stale", "clear", lambda: shutil.rmtree(cache), writes=cache, reported=False)]


def unwritable_reason(path: Path) -> str | None:
    """Why ``path`` cannot be created, replaced or removed; None when it can."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"no permission to write in {folder}"
    return None


def preflight(plan: Plan, root: Path) -> None:
    """Refuse before changing anything, rather than leave a half-installed tree."""
    for step in plan.changes():
        if step.writes is None:
            continue
        reason = unwritable_reason(step.writes)
        if reason:
            raise InstallError(
                f"cannot write {step.writes}: {reason}. "
                f"Check --a0-root ({root}) and that you run as a user who may write there."
            )


class Printer:
    def __init__(self, root: Path, mode: str, dry_run: bool):
        self.root = root
        self.mode = mode
        self.dry_run = dry_run

    def step(self, step: Step) -> None:
        if self.mode == "check":
            if step.reported:
                self.line(step.state, step.subject, step.note)
        elif step.changes:
            self.line(("would " if self.dry_run else "") + step.change, step.subject, step.note)
        else:
            self.line(step.state, step.subject, step.note)

    def line(self, label: str, subject: Path | str, note: str = "") -> None:
        # paths inside Agent-Zero are shown relative to it; the header names the root
        if isinstance(subject, Path) and self.root in subject.parents:
            subject = subject.relative_to(self.root).as_posix()
        print(f"  {label:<20} {subject}" + (f"  ({note})" if note else ""), flush=True)


def execute(plan: Plan, tree: Tree, component: str, mode: str, dry_run: bool) -> int:
    """Print (and unless ``mode`` is "check" or ``dry_run``, apply) the plan; the exit code."""
    printer = Printer(tree.root, mode, dry_run)
    changing = mode != "check"
    if changing:
        # a dry run fails the same way the real run would
        preflight(plan, tree.root)
    for phase in plan.phases:
        print(f"\n== {phase.title} ==")
        for step in phase.steps:
            printer.step(step)
            if step.changes and changing and not dry_run:
                _apply(step)
    if plan.warnings:
        print("\n== Warnings ==")
        for warning in dict.fromkeys(plan.warnings):
            print(f"  warning: {warning}")
    return summarize(plan, tree, component, mode, dry_run)


def _apply(step: Step) -> None:
    assert step.apply is not None
    try:
        step.apply()
    except OSError as exc:
        target = exc.filename or step.writes or step.subject
        raise InstallError(f"{step.change} {step.subject} failed: {target}: {exc.strerror or exc}.") from None


def summarize(plan: Plan, tree: Tree, component: str, mode: str, dry_run: bool) -> int:
    pending = [s for s in plan.changes() if s.reported]
    print()
    if mode == "check":
        if pending:
            print(f"Check: {len(pending)} item(s) missing or outdated. Run {COMPONENTS[component]} to install them.")
            return EXIT_NOT_CURRENT
        print("Check: everything is installed and current.")
        return EXIT_OK
    if dry_run:
        print(f"Dry run: {len(plan.changes())} change(s) would be made; nothing was changed.")
        return EXIT_OK
    if not plan.changes():
        done = "installed and current." if mode == "install" else "removed."
        print(f"Nothing to change: everything is already {done}")
        return EXIT_OK
    print(f"Done: {len(plan.changes())} change(s).")
    if plan.hooks_changed and not tree.era.reloads_changed_files:
        print("Restart Agent-Zero (`supervisorctl restart run_ui` in the container, or restart the container): "
              f"Agent-Zero {tree.era.versions} loads extensions once and keeps them until it restarts.")
    return EXIT_OK
