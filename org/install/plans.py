"""The install and uninstall plans of each component (all, supervisor-loop, supervisors)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from org.install.contents import HOOKS, KERNEL, LLM_SUPERVISORS, SUPERVISOR, Pack, hooks_of
from org.install.eras import Tree, find_clashes
from org.install.forms import form_removal_steps, plugin_phase, switch_phase
from org.install.library import library_removal_step, library_status, library_step, library_warnings
from org.install.manifest import (
    activation_step,
    deactivation_step,
    doctrine_steps,
    manifest_step,
    organization_removal_steps,
    read_manifest,
)
from org.install.steps import Phase, Plan, Step, folder_step, hook_steps

#: In the organizations folder: once it exists, install_all.sh installs the LLM supervisors' hooks too.
SUPERVISORS_CONFIG = "supervisors.yaml"


@dataclass
class Options:
    """What one run is asked to do, as the command line says it."""

    component: str
    a0_root: Path
    pack_dir: Path | None = None
    python: str = sys.executable
    library: bool = True
    mode: str = "install"  # install | check | uninstall
    dry_run: bool = False
    activate: str | None = None
    deactivate: bool = False
    #: also the LLM supervisors' phase (component "all"); see wants_supervisors
    supervisors: bool = False
    #: "plugin" or "extensions" as asked for with --form; None: see org.install.plugin.choose_form
    form: str | None = None


def wants_supervisors(tree: Tree, options: Options) -> bool:
    """install_all.sh takes the LLM supervisors' phase along when asked (--with-supervisors), once a
    model is configured (supervisors.yaml exists), when their hooks are installed already (to keep
    them current), and always when uninstalling."""
    if options.component != "all":
        return options.component == "supervisors"
    return options.supervisors or options.mode == "uninstall" or supervisors_in_use(tree)


def supervisors_in_use(tree: Tree) -> bool:
    """A model is configured for the LLM supervisors, or one of their hooks is installed."""
    installed = any(form.hook_path(h).exists() for form in (tree, *tree.other_forms())
                    for h in HOOKS if h.phase == LLM_SUPERVISORS)
    return installed or (tree.organizations / SUPERVISORS_CONFIG).is_file()


def install_plan(tree: Tree, pack: Pack, options: Options) -> Plan:
    plan = Plan()
    hooks = hooks_of(options.component, options.supervisors)
    plugin = plugin_phase(tree, pack, hooks, plan)
    if plugin:
        plan.phases.append(plugin)
    if options.component == "all":
        plan.phases.append(kernel_phase(tree, pack, options, plan))
    supervisor = Phase("Phase 2: supervisor loop" if options.component == "all" else "Supervisor loop")
    if options.component != "all" or not options.library:
        # not installing the library here, so at least say whether the hooks will find it
        plan.warnings += library_warnings(library_status(options.python, pack), options.python)
    if options.component != "supervisors":
        supervisor.steps = hook_steps(tree, pack, [h for h in hooks if h.phase == SUPERVISOR], plan)
        plan.phases.append(supervisor)
    if options.component != "supervisor-loop":
        plan.phases.append(llm_supervisors_phase(tree, pack, options, plan))
    switch = switch_phase(tree, plan)
    if switch:
        plan.phases.append(switch)
    plan.warnings.extend(era_warnings(tree))
    plan.warnings.extend(c.message() for c in find_clashes(tree, hooks))
    return plan


def llm_supervisors_phase(tree: Tree, pack: Pack, options: Options, plan: Plan) -> Phase:
    phase = Phase("Phase 3: LLM supervisors" if options.component == "all" else "LLM supervisors")
    hooks = [h for h in HOOKS if h.phase == LLM_SUPERVISORS]
    config = tree.organizations / SUPERVISORS_CONFIG
    if not options.supervisors:
        phase.steps.append(Step(", ".join(h.label for h in hooks), "off",
                                note=f"installed with --with-supervisors, or once {config} configures a model"))
        return phase
    phase.steps = hook_steps(tree, pack, hooks, plan)
    if not config.is_file() and options.mode != "uninstall":
        plan.warnings.append(f"the LLM supervisors do nothing until {config} configures a model "
                             "(see docs/supervisors-llm.md in the pack).")
    return phase


def kernel_phase(tree: Tree, pack: Pack, options: Options, plan: Plan) -> Phase:
    phase = Phase("Phase 1: kernel")
    if options.library and (pack.root / "pyproject.toml").is_file():
        phase.steps.append(library_step(options.python, pack, plan))
    elif options.library:
        # the pack is the installed library's data files (share/a0-org-kernel): nothing to pip install from
        plan.warnings.append(f"{pack.root} has no pyproject.toml, so the library is not installed from it.")
        plan.warnings += library_warnings(library_status(options.python, pack), options.python)
    phase.steps += hook_steps(tree, pack, [h for h in HOOKS if h.phase == KERNEL], plan)
    orgs = tree.organizations
    for folder in (orgs, orgs / "roles", orgs / "schemas", orgs / "reports", orgs / "reports" / "archive"):
        step = folder_step(folder)
        if step:
            phase.steps.append(step)
    pack_files = pack.organization_files()
    steps, manifest = doctrine_steps(orgs, pack_files, read_manifest(orgs))
    phase.steps += steps
    phase.steps.append(manifest_step(orgs, manifest, pack.version))
    if options.activate:
        phase.steps.append(activation_step(orgs, options.activate, pack_files))
    if options.deactivate:
        phase.steps.append(deactivation_step(orgs))
    return phase


def era_warnings(tree: Tree) -> list[str]:
    if tree.era.survives_image_update:
        return []
    return [
        f"Agent-Zero {tree.era.versions} only reads extensions from {tree.era.hook_dir_pattern.format(point='<point>')}, "
        "inside the image: updating or recreating the container loses the hooks. Run this installer again after every update."
    ]


def uninstall_plan(tree: Tree, pack: Pack | None, options: Options) -> Plan:
    """Remove the component's hooks from every form they may be in (the plugin's files with the
    last of them), and with "all" the organizations folder and the library."""
    plan = Plan()
    hooks = hooks_of(options.component, options.supervisors)
    phase = Phase("Uninstall: " + {"all": "kernel, supervisor loop and LLM supervisors", "supervisor-loop": "supervisor loop",
                                   "supervisors": "LLM supervisors"}[options.component])
    for form in (tree, *tree.other_forms()):
        # the form not in use is named only where it has files
        phase.steps += form_removal_steps(form, hooks, plan, uninstalling=True, report_missing=form is tree)
    if options.component == "all":
        phase.steps += organization_removal_steps(tree.organizations, pack, plan)
        if options.library:
            phase.steps.append(library_removal_step(options.python))
    plan.phases.append(phase)
    plan.warnings.extend(c.message() for c in find_clashes(tree, hooks) if c.kind in ("replaces ours", "stale copy"))
    return plan
