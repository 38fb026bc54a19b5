"""Commands of the macrocosm: ``a0org xo``, ``keys``, ``status``, ``watch`` and ``tail``.

The arguments are parsed here and handed on as plain values.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, TypeVar

from .environment import ENV_VOLUME

#: ``watch`` stops after this many tables, ``tail`` after this many lines or seconds:
#: for scripts (and tests) that need a view to end by itself. See docs/macrocosm.md.
ENV_WATCH_FRAMES = "A0ORG_WATCH_FRAMES"
ENV_TAIL_LINES = "A0ORG_TAIL_LINES"
ENV_TAIL_SECONDS = "A0ORG_TAIL_SECONDS"

N = TypeVar("N", int, float)


class _BadSetting(ValueError):
    pass


def _env_number(name: str, kind: Callable[[str], N]) -> N | None:
    """The number in ``$name``; None when unset or empty."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise _BadSetting(f"${name}={text!r} is not a number") from None


def _volume_argument(parser: argparse.ArgumentParser) -> None:
    default = os.environ.get(ENV_VOLUME)
    parser.add_argument(
        "--volume", default=default, required=default is None,
        help=f"the shared volume's folder (default: ${ENV_VOLUME})",
    )


def _home_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", default=os.environ.get("A0ORG_XO_HOME") or None,
                        help="the XO's home, to show what the XO knows of each unit (default: $A0ORG_XO_HOME)")


def _xo(args: argparse.Namespace) -> int:
    from . import daemon

    options = daemon.DaemonOptions(
        role=args.role,
        polling=bool(args.polling),
        poll_interval=max(0.01, float(args.poll_interval)),
        debounce=max(0.0, float(args.debounce)),
        rescan=max(0.1, float(args.rescan)),
        once=bool(args.once),
        relay_interval=None if args.no_relay else max(0.0, float(args.relay_interval)),
    )
    return daemon.main(args.volume, args.home, options, insecure=bool(args.insecure))


def _keys(args: argparse.Namespace) -> int:
    from . import keys
    from .signing import OrganizationKeyError

    folder = keys.KeyFolder(Path(args.dir).expanduser())
    try:
        if args.action == "init":
            kid = keys.init(folder)
            print(f"signing key {kid} created in {folder.xo_home}; public keys for the units: {folder.public_file}")
        elif args.action == "rotate":
            kid, old = keys.rotate(folder)
            print(f"signing key {kid} created and active; restart the XO to sign with it. Units accept it and {old} "
                  f"while both are in {folder.public_file}; once they have the new file: a0org keys retire {old} --dir {args.dir}")
        elif args.action == "retire":
            if not args.name:
                print("a0org keys retire: name the key id to retire", file=sys.stderr)
                return 2
            keys.retire(folder, args.name)
            print(f"key {args.name} retired: removed from {folder.public_file} and the XO's signing keys")
        elif args.action == "unit":
            if not args.name:
                print("a0org keys unit: name the unit", file=sys.stderr)
                return 2
            path = keys.add_unit(folder, args.name, args.role)
            print(f"report key of unit {args.name}: {path} (mount it into that unit only, as A0ORG_UNIT_KEY); the XO's copy is in {folder.xo_home}/units/"
                  + (f"; the XO judges it as role {args.role}" if args.role else ""))
    except OrganizationKeyError as exc:
        print(f"a0org keys {args.action}: {exc}", file=sys.stderr)
        return 2
    problems = keys.check(folder)
    for problem in problems:
        print(f"WARNING: {problem}", file=sys.stderr)
    if args.action == "check" and not problems:
        print(f"{folder.root}: every private file is readable by its owner only")
    return 1 if problems else 0


def _status(args: argparse.Namespace) -> int:
    from .views import status

    return status.main(args.volume, as_json=bool(args.json), home=args.home)


def _watch(args: argparse.Namespace) -> int:
    from .views import watch

    try:
        frames = _env_number(ENV_WATCH_FRAMES, int)
    except _BadSetting as exc:
        print(f"a0org watch: {exc}", file=sys.stderr)
        return 2
    return watch.main(args.volume, args.interval, frames=frames, home=args.home)


def _tail(args: argparse.Namespace) -> int:
    from .views import tail

    try:
        max_lines, seconds = _env_number(ENV_TAIL_LINES, int), _env_number(ENV_TAIL_SECONDS, float)
    except _BadSetting as exc:
        print(f"a0org tail: {exc}", file=sys.stderr)
        return 2
    return tail.main(args.volume, args.unit, args.last, args.interval, max_lines=max_lines, seconds=seconds)


def _dashboard(args: argparse.Namespace) -> int:
    from .views import web

    return web.main(args.volume, args.http, args.token or os.environ.get(web.ENV_TOKEN) or None, args.home)


def add_commands(sub) -> None:
    p = sub.add_parser("xo", help="supervise every unit on a shared volume from their SALUTE reports")
    _volume_argument(p)
    p.add_argument("--role", default="xo", help="the XO's role id, named as the sender of every steering (default: xo)")
    p.add_argument("--polling", action="store_true", help="poll the volume instead of waiting for file-system events")
    p.add_argument("--poll-interval", type=float, default=1.0, help="seconds between scans when polling (default 1)")
    p.add_argument("--debounce", type=float, default=0.02, help="during a burst of reports, at most one sweep per this many seconds; a lone report is swept at once (default 0.02)")
    p.add_argument("--rescan", type=float, default=5.0, help="seconds between safety scans while events arrive (default 5)")
    p.add_argument("--home", help="the XO's home, outside the volume: signing key, units' report keys, steering texts, roles (default: $A0ORG_XO_HOME)")
    p.add_argument("--insecure", action="store_true", help="run without a home: unsigned steering, unauthenticated reports (a trial on a machine you alone use)")
    p.add_argument("--once", action="store_true", help="sweep every unit once and exit")
    p.add_argument("--relay-interval", type=float, default=300.0,
                   help="the learning relay sends a unit at most one message of other units' learnings per this many seconds (default 300)")
    p.add_argument("--no-relay", action="store_true", help="do not relay what one unit learned to the others")
    p.set_defaults(func=_xo)

    p = sub.add_parser("keys", help="create and rotate the macrocosm's keys (docs/security.md)")
    p.add_argument("action", choices=("init", "rotate", "retire", "unit", "check"),
                   help="init: the first signing key; rotate: a new one; retire KEY_ID: drop an old one; unit NAME: a unit's report key; check: file permissions")
    p.add_argument("name", nargs="?", help="the key id (retire) or the unit id (unit)")
    p.add_argument("--dir", required=True, help="the key folder (e.g. ~/.a0org); keep it off the shared volume")
    p.add_argument("--role", help="unit: the role the XO judges the unit by (written to the XO's units.yaml)")
    p.set_defaults(func=_keys)

    p = sub.add_parser("status", help="one row per unit on a shared volume")
    _volume_argument(p)
    _home_argument(p)
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_status)

    p = sub.add_parser("watch", help="the status view, live, updated in place", epilog=f"${ENV_WATCH_FRAMES}=N stops it after N tables.")
    _volume_argument(p)
    _home_argument(p)
    p.add_argument("--interval", type=float, default=1.0, help="seconds between refreshes (default 1)")
    p.set_defaults(func=_watch)

    p = sub.add_parser(
        "tail", help="a unit's SALUTE reports and steering as they arrive",
        epilog=f"${ENV_TAIL_LINES}=N stops it after N lines, ${ENV_TAIL_SECONDS}=S after S seconds.",
    )
    p.add_argument("unit")
    _volume_argument(p)
    p.add_argument("--last", type=int, default=10, help="steering messages already there to show first (default 10)")
    p.add_argument("--interval", type=float, default=0.5, help="seconds between looks at the volume (default 0.5)")
    p.set_defaults(func=_tail)

    p = sub.add_parser("dashboard", help="the XO page: every unit, its last steering and what followed, steering over time, "
                                         "in a browser (read-only)")
    _volume_argument(p)
    _home_argument(p)
    p.add_argument("--http", default="127.0.0.1:8765", help="HOST:PORT to serve it on (default 127.0.0.1:8765; port 0: any free one)")
    p.add_argument("--token", help="the token the page's address must carry (?token=...); needed to bind a non-loopback "
                                   "address (default: $A0ORG_DASHBOARD_TOKEN)")
    p.set_defaults(func=_dashboard)
