"""The outcome classifier against real tool outputs with their exit codes.

    python bench/classifier.py OUTPUTS.jsonl [--show KIND]

OUTPUTS.jsonl holds one real tool output a line: ``{"command", "output", "exit_code", "kind"}``
where ``kind`` names what the command was (test_pass, test_fail, lint, grep, compile,
package, traceback, shell_ok, shell_error, edit, view, other). Prints, per kind, how the
classifier's verdict (failed / failing tests / fine) compares with the exit code.

A non-zero exit code is not the truth about failure: ``grep`` finding nothing exits 1, a
test run with failing tests exits 1 and a linter with findings exits 1, while a script that
catches its exception and prints the traceback exits 0. The table shows where the two
disagree and why, by kind. A trailer some scaffolds append (``Command `…` executed with exit
code N.``) is removed first, since Agent-Zero gives no exit code.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from org.kernel.classify import classify_output  # noqa: E402

EXIT_TRAILER = re.compile(r"\n?Command `.*` executed with exit code -?\d+\.\s*$", re.S)
VERDICTS = ("failed", "tests failed", "fine")


def verdict_of(output: str) -> str:
    verdict = classify_output(EXIT_TRAILER.sub("", output or ""))
    if verdict.failed:
        return "failed"
    return "tests failed" if verdict.error_type == "test" else "fine"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", type=Path)
    parser.add_argument("--show", help="print the disagreements of one kind")
    args = parser.parse_args(argv)
    table: dict[str, Counter] = defaultdict(Counter)
    shown = 0
    for line in args.outputs.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        code = row.get("exit_code")
        if not isinstance(code, int) or code < 0:
            continue  # no exit code recorded (or a timeout): nothing to compare with
        exit_failed = code != 0
        verdict = verdict_of(row.get("output") or "")
        table[row.get("kind", "other")][(exit_failed, verdict)] += 1
        table["all"][(exit_failed, verdict)] += 1
        if args.show == row.get("kind") and exit_failed != (verdict == "failed") and shown < 20:
            shown += 1
            print(f"--- exit {code}, {verdict}: {row.get('command', '')[:100]!r}\n{(row.get('output') or '')[-300:]}\n")
    header = "kind".ljust(12) + "".join(f"{'exit!=0 ' + v:>22}" for v in VERDICTS) + "".join(f"{'exit 0 ' + v:>22}" for v in VERDICTS)
    print(header)
    for kind in sorted(table, key=lambda k: (k == "all", k)):
        counts = table[kind]
        print(kind.ljust(12) + "".join(f"{counts[(True, v)]:>22}" for v in VERDICTS) + "".join(f"{counts[(False, v)]:>22}" for v in VERDICTS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
