"""Steps for the pack's two forms: the plugin's own files, and taking a form's files away.

Agent-Zero keeps one extension per file name, and a plugin's extension folder comes after
``usr/extensions/python/<point>``: a hook left in the extension folders would run even
while the plugin is switched off. So whenever the pack is installed in one form, its hook
files in the other form go (and the hooks installed only there move along), and
``--uninstall`` removes both forms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from org.install.contents import HOOKS, Hook, Pack
from org.install.eras import Tree
from org.install.plugin import OFF_FILE, ON_FILE, PLUGIN_FORM, toggles
from org.install.plugin_files import plugin_files
from org.install.steps import Phase, Plan, Step, empty_folder_steps, file_step, hook_steps, pycache_steps, remove_file


def form_label(tree: Tree) -> str:
    if tree.form == PLUGIN_FORM:
        return f"Agent-Zero plugin {tree.plugin_dir.relative_to(tree.root).as_posix()}/"
    return "extension folders"


def plugin_phase(tree: Tree, pack: Pack, hooks: Sequence[Hook], plan: Plan) -> Phase | None:
    """The plugin's manifest (first, so Agent-Zero knows the plugin before its hooks appear) and
    settings screen, and the hooks that move in from the other form although this run does not install them."""
    if tree.form != PLUGIN_FORM:
        return None
    phase = Phase("Plugin form")
    phase.steps += [file_step(tree.plugin_dir / rel, content, what) for rel, content, what in plugin_files(pack.version)]
    phase.steps += hook_steps(tree, pack, moving_hooks(tree, hooks), plan)
    return phase


def moving_hooks(tree: Tree, hooks: Sequence[Hook]) -> list[Hook]:
    """Hooks of ours installed in another form that this run does not install: they move with it."""
    return [h for h in HOOKS if h not in hooks and tree.supports(h)
            and any(other.hook_path(h).is_file() for other in tree.other_forms())]


def switch_phase(tree: Tree, plan: Plan) -> Phase | None:
    """Remove every hook file of ours in the other form(s)."""
    steps: list[Step] = []
    for other in tree.other_forms():
        steps += form_removal_steps(other, HOOKS, plan)
    if not steps:
        return None
    return Phase(f"Switching to the {tree.form} form: removing the {'plugin' if tree.form != PLUGIN_FORM else 'extension-folder'} copies",
                 steps)


def form_removal_steps(tree: Tree, hooks: Sequence[Hook], plan: Plan, uninstalling: bool = False,
                       report_missing: bool = False) -> list[Step]:
    """Remove ``hooks`` from ``tree``'s form; for the plugin, its manifest and toggles too once
    no hook of ours is left in it; then the folders that held nothing else. ``uninstalling``
    takes the plugin's switches for projects and agent profiles along; ``report_missing`` names
    the hooks that are not there."""
    steps: list[Step] = []
    removed_dirs: list[Path] = []
    for hook in hooks:
        path = tree.hook_path(hook)
        if path.exists():
            steps.append(Step(path, "installed", "remove", lambda p=path: remove_file(p), writes=path))
            removed_dirs.append(path.parent)
        elif report_missing:
            steps.append(Step(path, "not installed"))
    for folder in dict.fromkeys(removed_dirs):
        steps += pycache_steps(folder)
    stops = {tree.root, tree.root / "usr", tree.root / "usr" / "plugins"}
    if tree.form == PLUGIN_FORM:
        removing = {step.writes for step in steps if step.changes}
        left = [h for h in HOOKS if tree.hook_path(h).is_file() and tree.hook_path(h) not in removing]
        if not left:
            steps += plugin_file_removal_steps(tree, plan, uninstalling)
            removed_dirs += [tree.plugin_dir / "extensions" / "python", tree.plugin_dir / "webui", tree.plugin_dir / "api"]
    plan.hooks_changed = plan.hooks_changed or bool(removed_dirs)
    candidates = [parent for folder in removed_dirs for parent in (folder, *folder.parents)
                  if parent not in stops and tree.root in parent.parents]
    if tree.form == PLUGIN_FORM:
        candidates = [c for c in candidates if c == tree.plugin_dir or tree.plugin_dir in c.parents]
    steps += empty_folder_steps(candidates, steps)
    return steps


def plugin_file_removal_steps(tree: Tree, plan: Plan, uninstalling: bool) -> list[Step]:
    """The plugin's manifest and its own toggle files. Its switches for projects and agent profiles
    go with an uninstall; a switch of form keeps them (switching back restores them) and says so."""
    steps: list[Step] = []
    ours = [tree.plugin_dir / rel for rel, _, _ in plugin_files("")] + [tree.plugin_dir / OFF_FILE, tree.plugin_dir / ON_FILE]
    for path in ours:
        if path.is_file():
            steps.append(Step(path, "installed", "remove", lambda p=path: remove_file(p), writes=path))
    for folder in (tree.plugin_dir, tree.plugin_dir / "api"):  # hooks.py and the API, once Agent-Zero has imported them
        steps += pycache_steps(folder)
    scoped = [t for t in toggles(tree.root) if t.project or t.profile]
    if uninstalling:
        for toggle in scoped:
            steps.append(Step(toggle.path, f"switch for {toggle.scope}", "remove",
                              lambda p=toggle.path: remove_file(p), writes=toggle.path))
        steps += empty_folder_steps([t.path.parent for t in scoped], steps)
    elif scoped:
        plan.warnings.append(
            "the plugin's switches for " + ", ".join(f"{t.scope} ({t.path.relative_to(tree.root).as_posix()})" for t in scoped)
            + " stay where they are but switch nothing without the plugin: in the extension form the pack runs "
            "for every project and agent profile. Delete them if you no longer want them."
        )
    return steps
