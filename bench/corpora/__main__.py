"""``python -m bench.corpora CONVERTER RAW OUT``: convert one source's raw data to a replay corpus (README.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

from . import agent_zero_chats, autocoderover, claude_code_runs, mini_swe_agent, mini_swe_agent_tracked, mini_swe_agent_v2, openhands_completions, openhands_examples, repolaunch, swe_agent

CONVERTERS: dict[str, ModuleType] = {
    "mini-swe-agent": mini_swe_agent,
    "mini-swe-agent-v2": mini_swe_agent_v2,
    "mini-swe-agent-tracked": mini_swe_agent_tracked,
    "swe-agent": swe_agent,
    "autocoderover": autocoderover,
    "openhands-examples": openhands_examples,
    "openhands-completions": openhands_completions,
    "agent-zero-chats": agent_zero_chats,
    "claude-code-runs": claude_code_runs,
    "repolaunch": repolaunch,
}


def main(argv: list[str] | None = None) -> int:
    """One sub-command per converter; RAW and OUT mean what the converter's help says."""
    parser = argparse.ArgumentParser(prog="python -m bench.corpora", description=__doc__)
    converters = parser.add_subparsers(dest="converter", required=True, metavar="CONVERTER")
    for name, module in CONVERTERS.items():
        sub = converters.add_parser(name, help=module.__doc__.splitlines()[0], description=module.__doc__,
                                    formatter_class=argparse.RawDescriptionHelpFormatter)
        sub.add_argument("raw", type=Path, metavar="RAW", help=module.RAW_HELP)
        sub.add_argument("out", type=Path, metavar="OUT", help=module.OUT_HELP)
        if hasattr(module, "add_options"):
            module.add_options(sub)
    options = vars(parser.parse_args(argv))
    module = CONVERTERS[options.pop("converter")]
    module.run(options.pop("raw"), options.pop("out"), **options)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
