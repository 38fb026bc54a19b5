"""The plugin form: the pack as an Agent-Zero user plugin, and that plugin's on/off toggles.

From v0.9.9.0 Agent-Zero discovers a plugin as a folder ``usr/plugins/<name>/`` holding a
``plugin.yaml``, loads the extensions under its ``extensions/python/<point>/`` while the
plugin is on, and lets the user switch it on or off for everyone, for a project or for an
agent profile. The switch is a file: ``.toggle-0`` (off) or ``.toggle-1`` (on) in the plugin's
folder for that scope (see :func:`scope_dirs`). The facts, version by version, are in
docs/agent-zero.md; this module only reads and writes those files (standard library only).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from org.install import InstallError

#: the plugin's folder name and ``name:`` (Agent-Zero: ``^[a-z0-9_]+$``; a leading ``_`` is for its own plugins)
PLUGIN_NAME = "a0_org_kernel"
PLUGIN_META = "plugin.yaml"
OFF_FILE, ON_FILE = ".toggle-0", ".toggle-1"
PLUGIN_FORM, EXTENSIONS_FORM = "plugin", "extensions"
FORMS = (PLUGIN_FORM, EXTENSIONS_FORM)


def plugins_supported(root: Path) -> bool:
    """The tree's Agent-Zero has user plugins with file toggles (``helpers/plugins.py``, v0.9.9.0+)."""
    module = root / "helpers" / "plugins.py"
    try:
        source = module.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return all(marker in source for marker in (PLUGIN_META, OFF_FILE, ON_FILE))


def plugin_dir(root: Path) -> Path:
    return root / "usr" / "plugins" / PLUGIN_NAME


# ----------------------------------------------------------------------------- toggles


@dataclass(frozen=True)
class Toggle:
    """One toggle file of our plugin: who it applies to, and whether it switches on or off."""

    path: Path
    on: bool
    project: str = ""
    profile: str = ""

    @property
    def scope(self) -> str:
        parts = ([f"project {self.project}"] if self.project else []) + ([f"agent profile {self.profile}"] if self.profile else [])
        return ", ".join(parts) or "everyone"


def scope_dirs(root: Path, project: str = "", profile: str = "") -> list[Path]:
    """The plugin folders whose toggle files decide for an agent of ``profile`` in ``project``,
    least specific first: Agent-Zero (helpers/plugins.py ``get_enabled_plugins``) walks them
    in this order and the last toggle that applies wins."""
    name = PLUGIN_NAME
    dirs = [root / "plugins" / name, root / "usr" / "plugins" / name]
    if profile:
        dirs += [root / "agents" / profile / "plugins" / name, root / "usr" / "agents" / profile / "plugins" / name]
    if project:
        meta = root / "usr" / "projects" / project / ".a0proj"
        dirs.append(meta / "plugins" / name)
        if profile:
            dirs.append(meta / "agents" / profile / "plugins" / name)
    return dirs


def enabled_for(root: Path, project: str = "", profile: str = "") -> bool:
    """Agent-Zero's rule: on by default; while on, an ``.toggle-0`` switches it off; while off,
    only an ``.toggle-1`` switches it back on."""
    enabled = True
    for folder in scope_dirs(root, project, profile):
        enabled = not (folder / OFF_FILE).exists() if enabled else (folder / ON_FILE).exists()
    return enabled


_SCOPED_PATTERNS = (
    # (glob relative to the tree, index of the project name, index of the profile name) in the parts
    ("usr/projects/*/.a0proj/agents/*/plugins/" + PLUGIN_NAME, 2, 5),
    ("usr/projects/*/.a0proj/plugins/" + PLUGIN_NAME, 2, None),
    ("usr/agents/*/plugins/" + PLUGIN_NAME, None, 2),
    ("agents/*/plugins/" + PLUGIN_NAME, None, 1),
)


def toggles(root: Path) -> list[Toggle]:
    """Every toggle file of our plugin: the global one first, then per project and agent profile."""
    found: list[Toggle] = []
    for folder in (root / "plugins" / PLUGIN_NAME, plugin_dir(root)):
        found += [Toggle(folder / f, f == ON_FILE) for f in (OFF_FILE, ON_FILE) if (folder / f).is_file()]
    for pattern, project_at, profile_at in _SCOPED_PATTERNS:
        for folder in sorted(root.glob(pattern)):
            parts = folder.relative_to(root).parts
            project = parts[project_at] if project_at is not None else ""
            profile = parts[profile_at] if profile_at is not None else ""
            found += [Toggle(folder / f, f == ON_FILE, project, profile)
                      for f in (OFF_FILE, ON_FILE) if (folder / f).is_file()]
    return found


def describe_toggles(root: Path) -> tuple[bool, list[str]]:
    """Whether the plugin is on for everyone, and one sentence per scope that differs."""
    on = enabled_for(root)
    exceptions = []
    for toggle in toggles(root):
        if not (toggle.project or toggle.profile):
            continue
        effective = enabled_for(root, toggle.project, toggle.profile)
        if effective != on:
            exceptions.append(f"{'on' if effective else 'off'} for {toggle.scope} ({toggle.path.relative_to(root).as_posix()})")
    return on, exceptions


# ----------------------------------------------------------------------------- which form


def choose_form(root: Path, supported: bool, requested: str | None, installed: list[str]) -> str:
    """The form to install: the one asked for; else the one installed (an upgrade keeps it);
    else the plugin where Agent-Zero has plugins, extension folders before."""
    if requested == PLUGIN_FORM and not supported:
        raise InstallError(
            f"--form plugin: the Agent-Zero at {root} has no plugins (they came with v0.9.9.0); "
            "use --form extensions, or leave --form out."
        )
    if requested:
        return requested
    if not supported:
        return EXTENSIONS_FORM
    if installed == [EXTENSIONS_FORM]:
        return EXTENSIONS_FORM
    return PLUGIN_FORM
