"""Which Agent-Zero a tree is (its era), where its loader looks, and files that clash with ours."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from org.install import InstallError
from org.install.contents import HOOKS, Hook, read_text
from org.install.plugin import EXTENSIONS_FORM, PLUGIN_FORM, PLUGIN_META, PLUGIN_NAME, plugin_dir, plugins_supported

DEFAULT_A0_ROOT = Path("/a0")
ORGS_REL = Path("usr") / "organizations"


@dataclass(frozen=True)
class Era:
    """One family of Agent-Zero versions that load extensions the same way."""

    code: str
    versions: str
    hook_dir_pattern: str
    #: folders the loader searches *before* ours: a same-named file there replaces ours
    searched_before: tuple[str, ...]
    #: folders searched *after* ours: ours replaces a same-named file there
    searched_after: tuple[str, ...]
    base_module: str
    awaits_execute: bool
    reloads_changed_files: bool
    survives_image_update: bool

    def hook_dir(self, root: Path, point: str) -> Path:
        return root / self.hook_dir_pattern.format(point=point)


ERA_D = Era(
    code="D",
    versions="v0.9.9.0 and newer, v1.x",
    hook_dir_pattern="usr/extensions/python/{point}",
    # order from helpers/subagents.py::get_paths in v1.7
    searched_before=(
        "usr/projects/*/.a0proj/agents/*/extensions/python/{point}",
        "usr/projects/*/.a0proj/extensions/python/{point}",
        "usr/agents/*/extensions/python/{point}",
        "usr/plugins/*/agents/*/extensions/python/{point}",
        "plugins/*/agents/*/extensions/python/{point}",
        "agents/*/extensions/python/{point}",
    ),
    searched_after=(
        "usr/plugins/*/extensions/python/{point}",
        "plugins/*/extensions/python/{point}",
        "extensions/python/{point}",
    ),
    base_module="helpers.extension",
    awaits_execute=False,
    reloads_changed_files=True,
    survives_image_update=True,
)
ERA_C = Era(
    code="C",
    versions="v0.9.8 to v0.9.8.3",
    hook_dir_pattern="usr/extensions/{point}",
    searched_before=(
        "usr/projects/*/.a0proj/agents/*/extensions/{point}",
        "usr/projects/*/.a0proj/extensions/{point}",
        "usr/agents/*/extensions/{point}",
        "agents/*/extensions/{point}",
    ),
    searched_after=("python/extensions/{point}",),
    base_module="python.helpers.extension",
    awaits_execute=True,
    reloads_changed_files=False,
    survives_image_update=True,
)
ERA_B = Era(
    code="B",
    versions="v0.9.3 to v0.9.7",
    hook_dir_pattern="python/extensions/{point}",
    # agents/<profile>/extensions/<point> files override python/extensions files by name
    searched_before=("agents/*/extensions/{point}",),
    searched_after=(),
    base_module="python.helpers.extension",
    awaits_execute=True,
    reloads_changed_files=False,
    survives_image_update=False,
)
ERAS = (ERA_D, ERA_C, ERA_B)


@dataclass(frozen=True)
class Tree:
    """An Agent-Zero installation as found on disk, and the form the pack takes (or would take) in it."""

    root: Path
    era: Era
    version: str
    missing_points: frozenset[str] = frozenset()
    #: Agent-Zero has user plugins with on/off toggles (v0.9.9.0+)
    plugins: bool = False
    #: "extensions" (the era's extension folders) or "plugin" (usr/plugins/<name>/)
    form: str = EXTENSIONS_FORM

    @property
    def organizations(self) -> Path:
        return self.root / ORGS_REL

    @property
    def plugin_dir(self) -> Path:
        return plugin_dir(self.root)

    def hook_dir(self, point: str) -> Path:
        if self.form == PLUGIN_FORM:
            return self.plugin_dir / "extensions" / "python" / point
        return self.era.hook_dir(self.root, point)

    @property
    def hook_dir_label(self) -> str:
        return self.hook_dir("<point>").relative_to(self.root).as_posix()

    def hook_path(self, hook: Hook) -> Path:
        return self.hook_dir(hook.point) / hook.name

    def in_form(self, form: str) -> "Tree":
        return replace(self, form=form)

    def forms(self) -> tuple[str, ...]:
        return (EXTENSIONS_FORM, PLUGIN_FORM) if self.plugins else (EXTENSIONS_FORM,)

    def other_forms(self) -> list["Tree"]:
        return [self.in_form(form) for form in self.forms() if form != self.form]

    def installed_forms(self) -> list[str]:
        """The forms with any of our hook files in place (the plugin's also with only its plugin.yaml)."""
        found = []
        for form in self.forms():
            tree = self.in_form(form)
            if any(tree.hook_path(h).is_file() for h in HOOKS) or (form == PLUGIN_FORM and (self.plugin_dir / PLUGIN_META).is_file()):
                found.append(form)
        return found

    def supports(self, hook: Hook) -> bool:
        return hook.point not in self.missing_points


_CALL_EXTENSIONS_RE = re.compile(r"^(?:async\s+)?def\s+call_extensions\s*\(", re.MULTILINE)


def detect_tree(root: Path) -> Tree:
    """Find the era of the Agent-Zero tree at ``root`` from its files alone."""
    if not root.is_dir():
        raise InstallError(f"{root} is not a folder. Pass --a0-root with Agent-Zero's folder (in the Docker image: /a0).")
    missing = [name for name in ("agent.py", "run_ui.py") if not (root / name).is_file()]
    if missing:
        raise InstallError(
            f"{root} is not an Agent-Zero folder: no {' and no '.join(missing)}. "
            "Pass --a0-root with the folder that holds Agent-Zero's agent.py (in the Docker image: /a0)."
        )
    version = detect_version(root)
    if (root / "helpers" / "extension.py").is_file():
        return Tree(root, ERA_D, version, plugins=plugins_supported(root))
    old_module = root / "python" / "helpers" / "extension.py"
    if not old_module.is_file():
        raise InstallError(
            f"{root} has agent.py but neither helpers/extension.py (Agent-Zero v0.9.9+) nor "
            "python/helpers/extension.py (v0.9.3 to v0.9.8.x), so its extension system is unknown. "
            "This pack supports Agent-Zero v0.9.3 and newer."
        )
    if (root / "python" / "helpers" / "subagents.py").is_file():
        return Tree(root, ERA_C, version)
    if _CALL_EXTENSIONS_RE.search(read_text(old_module)):
        # the tool hooks were added in v0.9.5; v0.9.3 and v0.9.4 never call them
        agent_source = read_text(root / "agent.py")
        missing_points = frozenset() if "tool_execute_after" in agent_source else frozenset({"tool_execute_after", "tool_execute_before"})
        return Tree(root, ERA_B, version, missing_points)
    raise InstallError(
        f"{old_module} defines no call_extensions function: this is Agent-Zero v0.9.2 or older "
        f"(version: {version}), which this pack does not support. Update Agent-Zero to v0.9.3 or newer."
    )


def detect_version(root: Path) -> str:
    """``git describe --tags`` when the tree is a git checkout and git is installed, else "unknown"."""
    git = shutil.which("git")
    if not (root / ".git").exists() or git is None:
        return "unknown"
    try:
        result = subprocess.run(
            # safe.directory: the tree is often owned by another user than the one installing
            [git, "-c", f"safe.directory={root}", "-C", str(root), "describe", "--tags"],
            capture_output=True, text=True, timeout=20, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    described = result.stdout.strip() if result.returncode == 0 else ""
    return described or "unknown"


@dataclass(frozen=True)
class Clash:
    """A file with the name of one of our hooks somewhere it changes (or confuses) what runs."""

    hook: Hook
    path: Path
    kind: str  # "replaces ours" | "replaced by ours" | "stale copy"
    ours: Path
    scope: str = ""  # e.g. "for agent profile agent0", from the folder it sits in

    @property
    def hides_ours(self) -> bool:
        return self.kind == "replaces ours"

    def describe(self) -> str:
        if self.kind == "replaces ours":
            return (f"{self.path} has the same name as our hook, so Agent-Zero loads it INSTEAD of "
                    f"{self.ours}{' ' + self.scope if self.scope else ''}.")
        if self.kind == "replaced by ours":
            return (f"{self.path} has the same name as our hook; Agent-Zero loads ours ({self.ours}) instead, "
                    "so that file never runs.")
        return (f"{self.path} is a copy of our hook in a folder this Agent-Zero version does not read "
                "(harmless, but confusing).")

    @property
    def fix(self) -> str:
        if self.kind == "replaces ours":
            return "Remove it if it is an old copy of ours; rename it if it is a different extension."
        if self.kind == "replaced by ours":
            return "Rename it if you need both."
        return "Remove it."

    def message(self) -> str:
        return f"{self.describe()} {self.fix}"


def _scope(root: Path, folder: Path) -> str:
    """Whom a higher-priority folder applies to, read from its path."""
    parts = folder.relative_to(root).parts
    scope = []
    for marker, words in (("projects", "in project"), ("plugins", "through plugin"), ("agents", "for agent profile")):
        if marker in parts and parts.index(marker) + 1 < len(parts):
            scope.append(f"{words} {parts[parts.index(marker) + 1]}")
    return ", ".join(scope)


_PLUGIN_EXTENSION_PATTERNS = ("usr/plugins/*/extensions/python/{point}", "plugins/*/extensions/python/{point}")


def searched_around(tree: Tree) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folder patterns searched before and after ours, for the form the pack takes.

    A plugin's extension folder comes after ``usr/extensions/python/<point>`` and among the
    other enabled plugins' in name order (v1.7 ``helpers/subagents.py::get_paths`` with
    ``helpers/plugins.py::get_plugins_list``); :func:`find_clashes` sorts those by name.
    """
    era = tree.era
    if tree.form != PLUGIN_FORM:
        return era.searched_before, era.searched_after
    before = era.searched_before + (era.hook_dir_pattern,)
    after = tuple(p for p in era.searched_after if p not in _PLUGIN_EXTENSION_PATTERNS)
    return before, after


def _plugin_kind(tree: Tree, path: Path) -> str | None:
    """For a file in another plugin's extension folder: does that plugin come before ours?"""
    rel = path.relative_to(tree.root).parts
    name = rel[2] if rel[0] == "usr" else rel[1]
    if name == PLUGIN_NAME:
        return None  # a core plugins/<our name> is shadowed by ours: Agent-Zero never reads it
    return "replaces ours" if name < PLUGIN_NAME else "replaced by ours"


def find_clashes(tree: Tree, hooks: Iterable[Hook] = HOOKS) -> list[Clash]:
    era = tree.era
    before, after = searched_around(tree)
    plugin_patterns = _PLUGIN_EXTENSION_PATTERNS if tree.form == PLUGIN_FORM else ()
    searched = set(before) | set(after) | set(era.searched_after)
    stale_patterns = [e.hook_dir_pattern for e in ERAS if e is not era and e.hook_dir_pattern not in searched]
    clashes: list[Clash] = []
    for hook in hooks:
        ours = tree.hook_path(hook)
        # our own copy in the other form is not a clash: the installer removes it, doctor reports it
        other_copies = {other.hook_path(hook) for other in tree.other_forms()}
        for kind, patterns in (
            ("replaces ours", before),
            ("replaced by ours", after),
            ("plugin", plugin_patterns),
            ("stale copy", stale_patterns),
        ):
            for pattern in patterns:
                for path in sorted(tree.root.glob(pattern.format(point=hook.point) + "/" + hook.name)):
                    if not path.is_file() or path == ours or path in other_copies:
                        continue
                    found = _plugin_kind(tree, path) if kind == "plugin" else kind
                    if found:
                        clashes.append(Clash(hook, path, found, ours, _scope(tree.root, path.parent)))
    return clashes
