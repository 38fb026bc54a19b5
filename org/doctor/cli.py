"""``a0org doctor`` and ``python -m org.doctor``: run every check and print the report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Sequence

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from org.doctor.report import Report


def diagnose(a0_root: Path, pack_dir: Path | None = None) -> Report:
    from org.doctor.configuration import check_llm_supervisors, check_organizations
    from org.doctor.hooks import check_clashes, check_hooks
    from org.doctor.library import check_library
    from org.doctor.link import check_supervision_mode
    from org.doctor.plugin import check_form, tree_in_its_form
    from org.doctor.report import PROBLEM, Check, Report
    from org.install import InstallError
    from org.install.contents import Pack, find_pack_dir
    from org.install.eras import detect_tree

    report = Report(a0_root=str(a0_root))
    try:
        tree = detect_tree(a0_root)
    except InstallError as exc:
        report.add(Check("tree", PROBLEM, str(a0_root), str(exc),
                         "pass --a0-root with Agent-Zero's folder (in the Docker image: /a0)"))
        return report
    tree = tree_in_its_form(tree)
    found_pack = find_pack_dir(pack_dir)
    pack = Pack(found_pack) if found_pack else None
    report.era, report.era_versions, report.version = tree.era.code, tree.era.versions, tree.version
    report.hook_dir = tree.hook_dir_label
    report.form = tree.form
    report.pack_dir = str(found_pack) if found_pack else None
    report.add(*check_form(tree, pack))
    report.add(*check_hooks(tree, pack))
    report.add(*check_clashes(tree))
    report.add(*check_llm_supervisors(tree))
    report.add(*check_library())
    report.add(*check_organizations(tree))
    report.add(*check_supervision_mode())
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--a0-root", type=Path, metavar="DIR", help="Agent-Zero's folder (default: /a0)")
    parser.add_argument("--pack-dir", type=Path, metavar="DIR",
                        help="the pack to compare the installed hooks with (default: found automatically)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--xo", action="store_true", help="check the XO's side instead: its home, keys, units' roles, units seen, volume")
    parser.add_argument("--home", type=Path, default=None, metavar="DIR", help="--xo: the XO's home (default: $A0ORG_XO_HOME)")
    parser.add_argument("--volume", type=Path, default=None, metavar="DIR", help="--xo: the shared volume (default: $A0ORG_VOLUME)")


def run(a0_root: Path | None = None, pack_dir: Path | None = None, as_json: bool = False) -> int:
    """Print the report on the tree at ``a0_root`` (default /a0; as JSON with ``as_json``); exit code 0 when nothing is a problem."""
    from org.doctor.report import render
    from org.install.eras import DEFAULT_A0_ROOT

    report = diagnose(Path(a0_root or DEFAULT_A0_ROOT).expanduser().absolute(), Path(pack_dir) if pack_dir else None)
    if as_json:
        print(json.dumps(report.as_json(), indent=2, default=str))
    else:
        print(render(report))
    return 1 if report.problems else 0


def run_xo(home: Path | None, volume: Path | None, as_json: bool = False) -> int:
    """``doctor --xo``: the report on the XO's home and volume; exit code 0 when nothing is a problem."""
    import os

    from org.doctor.report import render
    from org.doctor.xo import TOPICS, diagnose_xo

    home = home or (Path(os.environ["A0ORG_XO_HOME"]) if os.environ.get("A0ORG_XO_HOME") else None)
    volume = volume or (Path(os.environ["A0ORG_VOLUME"]) if os.environ.get("A0ORG_VOLUME") else None)
    report = diagnose_xo(home.expanduser() if home else None, volume.expanduser() if volume else None)
    print(json.dumps(report.as_json(), indent=2, default=str) if as_json else render(report, TOPICS))
    return 1 if report.problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="a0org doctor", description="Check that the pack is installed in Agent-Zero and that every hook loads."
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.xo:
        return run_xo(args.home, args.volume, args.json)
    return run(args.a0_root, args.pack_dir, args.json)
