"""``a0org``: the pack's command line."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path


def _cmd_validate(args: argparse.Namespace) -> int:
    from org.validate import validate_paths

    problems, checked = validate_paths([Path(p) for p in args.paths])
    for problem in problems:
        print(problem, file=sys.stderr)
    status = "valid" if not problems else f"{len(problems)} problem(s)"
    print(f"{checked} file(s) checked: {status}")
    return 0 if not problems and checked else 1


def _cmd_schemas(args: argparse.Namespace) -> int:
    from org.schema_export import write_schemas

    written = write_schemas(Path(args.out))
    for path in written:
        print(f"wrote {path}")
    print(f"{len(written)} schema file(s) changed in {args.out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.macrocosm:
        from org.macrocosm.demo import run_macrocosm_demo

        run_macrocosm_demo(sys.stdout, Path(args.out) if args.out else None, era=args.era)
        return 0
    from org.demo import run_demo

    run_demo(sys.stdout, Path(args.out) if args.out else None, era=args.era)
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from org.a0.saved_chats import looks_like_chat
    from org.kernel.loading import DocumentError
    from org.replay import replay

    org_dir = Path(args.org_dir) if args.org_dir else None
    if looks_like_chat(Path(args.trace)):
        from org.replay_chats import replay_chats

        return replay_chats(Path(args.trace), sys.stdout, sys.stderr, org_dir, args.role,
                            Path(args.doctrine) if args.doctrine else None, args.era, args.json)
    if args.role or args.doctrine:
        print("a0org replay: --role and --doctrine are for Agent-Zero's saved chats; a trace names them in its header", file=sys.stderr)
        return 2
    try:
        lines = replay(Path(args.trace), era=args.era or "D", org_dir=org_dir)
    except DocumentError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    for line in lines:
        print(json.dumps(line, ensure_ascii=False))
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    from org.explain import main as explain

    return explain(_home(args), args.role, args.project, args.json)


def _home(args: argparse.Namespace) -> Path:
    """The folder whose ``events/`` to read: the XO's home (the XO's), else the organizations folder."""
    from org.kernel.paths import organizations_dir

    if getattr(args, "xo_home", None):
        return Path(args.xo_home)
    return Path(args.org_dir) if args.org_dir else organizations_dir()


def _cmd_events(args: argparse.Namespace) -> int:
    from org.stats import events_main

    return events_main(_home(args), args.type, args.role, args.since, args.follow, args.json, unit=args.unit)


def _cmd_stats(args: argparse.Namespace) -> int:
    from org.stats import stats_main

    return stats_main(_home(args), args.within, args.json)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from org.doctor import cli as doctor

    if args.xo:
        return doctor.run_xo(args.home, args.volume, args.json)
    return doctor.run(args.a0_root, args.pack_dir, args.json)


#: Feature packages that bring their own commands: each has ``add_commands(subparsers)``.
COMMAND_MODULES: tuple[str, ...] = ("org.macrocosm.cli", "org.knowledge.cli", "org.llm_supervisors.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="a0org", description="An executive officer for Agent-Zero.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="validate role doctrines, organizations, active.json, steering.yaml and SALUTE reports")
    p.add_argument("paths", nargs="+", help="files or folders (folders are searched for *.yaml, *.yml, *.json)")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("schemas", help="write the JSON Schemas generated from the contracts")
    p.add_argument("--out", default="schemas", help="target folder (default: ./schemas)")
    p.set_defaults(func=_cmd_schemas)

    p = sub.add_parser("demo", help="run a scripted session through the hook files and show the steering")
    p.add_argument("--out", help="folder for the organization and SALUTE reports (default: a new temporary folder)")
    p.add_argument("--era", choices=["C", "D"], default="D", help="Agent-Zero API to stand in for: C = v0.9.8.x, D = v0.9.9+/v1.x")
    p.add_argument("--macrocosm", action="store_true", help="an XO and three stand-in units on a temporary volume instead (no Docker, no model)")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("replay", help="run a recorded trace (JSON lines), or Agent-Zero's saved chats, and print one JSON line "
                                      "per supervisor action (for chats, then a summary)")
    p.add_argument("trace", help="a trace (.jsonl), or a saved chat: chat.json, a folder of them (usr/chats, tmp/chats) "
                                 "or an Agent-Zero folder")
    p.add_argument("--era", choices=["C", "D"], help="Agent-Zero API to stand in for: C = v0.9.8.x and older, "
                                                     "D = v0.9.9+/v1.x (default: D; for a saved chat, the chat's own)")
    p.add_argument("--org-dir", help="keep the organization folder (SALUTE reports; for chats, the events) here")
    p.add_argument("--role", help="saved chats: the role to replay them as (default: the organization's default role)")
    p.add_argument("--doctrine", help="saved chats: a YAML or JSON file of doctrine values (or a role file) "
                                      "merged into the role's doctrine")
    p.add_argument("--json", action="store_true", help="saved chats: the summary as one JSON line")
    p.set_defaults(func=_cmd_replay)

    p = sub.add_parser("explain", help="show a role as it runs: every value of its doctrine and plan, and every steering text, "
                                       "with the file and line it came from")
    p.add_argument("role", help="the role id")
    p.add_argument("--org-dir", help="the organizations folder (default: $A0ORG_HOME, else <Agent-Zero>/usr/organizations)")
    p.add_argument("--project", help="as for a chat in this Agent-Zero project (with its overrides.yaml)")
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.set_defaults(func=_cmd_explain)

    org_dir_help = "the organizations folder (default: $A0ORG_HOME, else <Agent-Zero>/usr/organizations)"
    p = sub.add_parser("events", help="the supervision events: radio checks with findings, steering, blocks, pauses, resumes, progress, relays, LLM supervisor runs, directives done")
    p.add_argument("--org-dir", help=org_dir_help)
    p.add_argument("--xo-home", help="the XO's events instead, kept in its home")
    p.add_argument("--type", action="append", help="only this type (repeatable)")
    p.add_argument("--role", help="only this role")
    p.add_argument("--unit", help="only this unit (events the XO wrote)")
    p.add_argument("--since", help="only since then: 30m, 2h, 1d or an ISO time")
    p.add_argument("--follow", action="store_true", help="keep printing new events until Ctrl-C")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=_cmd_events)

    p = sub.add_parser("stats", help="per role and anomaly: steering, blocks, pauses, and how often progress followed")
    p.add_argument("--org-dir", help=org_dir_help)
    p.add_argument("--xo-home", help="the XO's events instead, kept in its home")
    p.add_argument("--within", type=int, default=5, help="progress within this many turns counts (default 5)")
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.set_defaults(func=_cmd_stats)

    from org.doctor import cli as doctor

    p = sub.add_parser("doctor", help="check an Agent-Zero installation of the pack")
    doctor.add_arguments(p)
    p.set_defaults(func=_cmd_doctor)

    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
