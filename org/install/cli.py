"""The installer's command line: arguments become :class:`~org.install.plans.Options`; then the plan is built and run."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from org.install import InstallError
from org.install.contents import COMPONENTS, PACKAGE, Pack, default_pack_dirs, find_pack_dir, hooks_of
from org.install.eras import DEFAULT_A0_ROOT, Tree, detect_tree
from org.install.forms import form_label
from org.install.plans import Options, install_plan, uninstall_plan, wants_supervisors
from org.install.plugin import FORMS, choose_form
from org.install.steps import execute

EXIT_ERROR = 2


def parse_args(argv: Sequence[str]) -> Options:
    if not argv or argv[0] not in COMPONENTS:
        got = argv[0] if argv else "nothing"
        raise InstallError(f"usage: python -m org.install {{{','.join(COMPONENTS)}}} [options]; got {got!r}")
    component = argv[0]
    parser = argparse.ArgumentParser(
        prog=COMPONENTS[component],
        description={
            "all": "Install the organization kernel (library, dispatcher and tool-outcome hooks, roles, schemas, "
                   "organization templates) and the supervisor loop into Agent-Zero; the LLM supervisors too with "
                   "--with-supervisors or once supervisors.yaml configures a model.",
            "supervisor-loop": "Install only the supervisor-loop hooks (radio check, and a unit's steering inbox) into Agent-Zero.",
            "supervisors": "Install only the LLM supervisors' hooks (task start and end, prompt sections) into Agent-Zero.",
        }[component],
    )
    parser.add_argument("--a0-root", type=Path, default=DEFAULT_A0_ROOT, metavar="DIR", help="Agent-Zero's folder (default: /a0)")
    parser.add_argument(
        "--python", metavar="PATH",
        help="Agent-Zero's Python; the wrapper script runs the installer with it "
             "(default /opt/venv-a0/bin/python, else /opt/venv/bin/python)",
    )
    parser.add_argument("--pack-dir", type=Path, metavar="DIR",
                        help="the pack to install from (default: the folder this installer is in)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--check-only", action="store_true",
                       help="report what is installed, missing, outdated or edited; exit 1 unless all is current")
    modes.add_argument("--uninstall", action="store_true",
                       help="remove what the pack installed, keeping files you edited and reports")
    parser.add_argument("--dry-run", action="store_true", help="print every action without changing anything")
    parser.add_argument(
        "--form", choices=FORMS,
        help="plugin: install as the Agent-Zero plugin usr/plugins/a0_org_kernel/ (v0.9.9+), switched on and off "
             "per project or agent in Agent-Zero's plugin settings; extensions: plain extension folders. Default: "
             "the form already installed, else plugin where Agent-Zero has plugins. The other form's files are removed",
    )
    if component == "all":
        parser.add_argument("--no-library", action="store_true", help=f"do not pip install (or uninstall) the {PACKAGE} library")
        switch = parser.add_mutually_exclusive_group()
        switch.add_argument("--activate", metavar="ORG_ID",
                            help="make ORG_ID (an installed organization template) the active organization")
        switch.add_argument("--deactivate", action="store_true", help="remove active.json, switching the organization kernel off")
        parser.add_argument("--with-supervisors", action="store_true",
                            help="also install the LLM supervisors' hooks (phase 3; docs/supervisors-llm.md). Without it "
                                 "they are installed only once supervisors.yaml exists or when they are installed already")
    args = parser.parse_args(list(argv[1:]))
    if args.python and os.path.abspath(args.python) != os.path.abspath(sys.executable):
        raise InstallError(
            f"--python {args.python}: run the installer with that Python (the wrapper scripts do), not {sys.executable}."
        )
    if args.dry_run and args.check_only:
        parser.error("--dry-run and --check-only cannot be combined")
    if getattr(args, "activate", None) and args.uninstall:
        parser.error("--activate and --uninstall cannot be combined")
    if args.form and args.uninstall:
        parser.error("--form and --uninstall cannot be combined (--uninstall removes both forms)")
    mode = "check" if args.check_only else "uninstall" if args.uninstall else "install"
    return Options(
        component=component,
        a0_root=args.a0_root.expanduser().absolute(),
        pack_dir=args.pack_dir,
        library=not getattr(args, "no_library", False),
        activate=getattr(args, "activate", None),
        deactivate=getattr(args, "deactivate", False),
        mode=mode,
        dry_run=args.dry_run,
        supervisors=getattr(args, "with_supervisors", False),
        form=args.form,
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        options = parse_args(argv)
        return run(options)
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def run(options: Options) -> int:
    tree = detect_tree(options.a0_root)
    tree = tree.in_form(choose_form(tree.root, tree.plugins, options.form, tree.installed_forms()))
    pack_dir = find_pack_dir(options.pack_dir)
    uninstalling = options.mode == "uninstall"
    if pack_dir is None and not uninstalling:
        raise InstallError(f"cannot find the pack (looked in {', '.join(map(str, default_pack_dirs()))}); pass --pack-dir.")
    # uninstalling works from the manifest alone when the pack is gone
    pack = Pack(pack_dir) if pack_dir else None
    options.supervisors = wants_supervisors(tree, options)
    if pack and not uninstalling:
        pack.check_complete(hooks_of(options.component, options.supervisors), need_doctrine=options.component == "all")
    print_header(tree, pack, options)
    plan = uninstall_plan(tree, pack, options) if uninstalling else install_plan(tree, pack, options)  # type: ignore[arg-type]
    return execute(plan, tree, options.component, options.mode, options.dry_run)


def print_header(tree: Tree, pack: Pack | None, options: Options) -> None:
    mode = {"install": "install", "check": "check only (nothing is changed)", "uninstall": "uninstall"}[options.mode]
    if options.dry_run:
        mode += ", dry run (nothing is changed)"
    print(f"{PACKAGE} {COMPONENTS[options.component]}: {mode}")
    print(f"  Agent-Zero:  {tree.root} (era {tree.era.code}: {tree.era.versions}; version {tree.version})")
    print(f"  form:        {form_label(tree)}{'' if tree.plugins else ' (this version has no plugins)'}")
    print(f"  hooks go to: {tree.hook_dir('<point>')}/")
    print(f"  pack:        {pack.root if pack else 'not found (uninstalling from the manifest)'}")
    print(f"  python:      {options.python}")

