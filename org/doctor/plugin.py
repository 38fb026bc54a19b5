"""The pack's form (plugin or extension folders) and, as a plugin, whether Agent-Zero has it switched on."""

from __future__ import annotations

from org.doctor.report import INFO, OK, PROBLEM, WARNING, Check
from org.install.contents import Pack, sha256_bytes, sha256_file
from org.install.eras import Tree
from org.install.plugin import EXTENSIONS_FORM, PLUGIN_FORM, PLUGIN_META, choose_form, describe_toggles, toggles
from org.install.plugin_files import plugin_files


def tree_in_its_form(tree: Tree) -> Tree:
    """The tree seen in the form the pack is installed in (the installer's default when none is)."""
    return tree.in_form(choose_form(tree.root, tree.plugins, None, tree.installed_forms()))


def check_form(tree: Tree, pack: Pack | None) -> list[Check]:
    if not tree.plugins:
        return []
    installed = tree.installed_forms()
    label = tree.plugin_dir.relative_to(tree.root).as_posix() + "/"
    if len(installed) > 1:
        return [Check("plugin", PROBLEM, "form", f"hook files in both forms: the plugin {label} and the extension folders "
                      f"({tree.era.hook_dir_pattern.format(point='<point>')}); the extension folders' copies run even while "
                      "the plugin is switched off", "run install_all.sh --form plugin (or --form extensions) to keep one")]
    if installed == [EXTENSIONS_FORM]:
        return [Check("plugin", INFO, "form", "installed in the extension folders: the pack runs for every project and agent",
                      "to switch it on and off per project or agent in Agent-Zero's plugin settings: install_all.sh --form plugin")]
    if tree.form != PLUGIN_FORM or not installed:
        return []
    files = [_plugin_file(tree, pack, label, rel, content, what) for rel, content, what in plugin_files(pack.version if pack else "")]
    return [*files, _toggle_state(tree)]


def _plugin_file(tree: Tree, pack: Pack | None, label: str, rel: str, content: bytes, what: str) -> Check:
    path = tree.plugin_dir / rel
    if not path.is_file() and rel == PLUGIN_META:
        return Check("plugin", PROBLEM, label + rel, "missing: Agent-Zero does not see the plugin, so none of its hooks run",
                     "run install_all.sh")
    if not path.is_file():
        return Check("plugin", WARNING, label + rel, f"missing: the {what} does not work without it",
                     "run install_all.sh")
    if pack is None:
        return Check("plugin", OK, label + rel, "installed (no pack to compare with)")
    if sha256_file(path) != sha256_bytes(content):
        return Check("plugin", WARNING, label + rel, "differs from the one the installer writes", "run install_all.sh")
    return Check("plugin", OK, label + rel, "current")


def _toggle_state(tree: Tree) -> Check:
    on, exceptions = describe_toggles(tree.root)
    details = {"enabled": on, "exceptions": exceptions,
               "toggles": [{"scope": t.scope, "on": t.on, "path": str(t.path)} for t in toggles(tree.root)]}
    but = f"; {'; '.join(exceptions)}" if exceptions else ""
    if on:
        return Check("plugin", OK, "on/off switch", f"on for everyone{but}", details=details)
    return Check("plugin", WARNING, "on/off switch", f"off for everyone: the pack does nothing{but}",
                 "switch it on in Agent-Zero's plugin list (or delete the .toggle-0 file it names)", details=details)
