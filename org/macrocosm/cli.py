"""Commands of the macrocosm: ``a0org xo``, ``status``, ``watch`` and ``tail``."""

from __future__ import annotations

import argparse
import os

from .volume import ENV_VOLUME


def _volume_argument(parser: argparse.ArgumentParser) -> None:
    default = os.environ.get(ENV_VOLUME)
    parser.add_argument(
        "--volume", default=default, required=default is None,
        help=f"the shared volume's folder (default: ${ENV_VOLUME})",
    )


def _xo(args: argparse.Namespace) -> int:
    from . import daemon

    return daemon.main(args)


def _status(args: argparse.Namespace) -> int:
    from . import views

    return views.status_main(args)


def _watch(args: argparse.Namespace) -> int:
    from . import views

    return views.watch_main(args)


def _tail(args: argparse.Namespace) -> int:
    from . import views

    return views.tail_main(args)


def add_commands(sub) -> None:
    p = sub.add_parser("xo", help="supervise every unit on a shared volume from their SALUTE reports")
    _volume_argument(p)
    p.add_argument("--role", default="xo", help="the XO's role id, named as the sender of every steering (default: xo)")
    p.add_argument("--polling", action="store_true", help="poll the volume instead of waiting for file-system events")
    p.add_argument("--poll-interval", type=float, default=1.0, help="seconds between scans when polling (default 1)")
    p.add_argument("--debounce", type=float, default=0.02, help="during a burst of reports, at most one sweep per this many seconds; a lone report is swept at once (default 0.02)")
    p.add_argument("--rescan", type=float, default=5.0, help="seconds between safety scans while events arrive (default 5)")
    p.add_argument("--key-file", help="organization key file for signing steering (default: $A0ORG_KEY, then $A0ORG_KEY_FILE)")
    p.add_argument("--once", action="store_true", help="sweep every unit once and exit")
    p.set_defaults(func=_xo)

    p = sub.add_parser("status", help="one row per unit on a shared volume")
    _volume_argument(p)
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_status)

    p = sub.add_parser("watch", help="the status view, live, updated in place")
    _volume_argument(p)
    p.add_argument("--interval", type=float, default=1.0, help="seconds between refreshes (default 1)")
    p.add_argument("--iterations", type=int, default=None, help=argparse.SUPPRESS)  # stop after N tables (tests)
    p.set_defaults(func=_watch)

    p = sub.add_parser("tail", help="a unit's SALUTE reports and steering as they arrive")
    p.add_argument("unit")
    _volume_argument(p)
    p.add_argument("--last", type=int, default=10, help="steering messages already there to show first (default 10)")
    p.add_argument("--interval", type=float, default=0.5, help="seconds between looks at the volume (default 0.5)")
    p.add_argument("--max-events", type=int, default=None, help=argparse.SUPPRESS)  # stop after N lines (tests)
    p.add_argument("--timeout", type=float, default=None, help=argparse.SUPPRESS)  # stop after N seconds (tests)
    p.set_defaults(func=_tail)
