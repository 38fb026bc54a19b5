"""The redactor on corpora: kinds of secrets caught, lines changed in code without secrets, time.

    python bench/redaction.py CODE_DIR [--lockfile package-lock.json] [--repo PATH]

* kinds: every sample of ``tests/secret_corpus.py`` (secrets in realistic files and outputs);
  a kind is caught when none of its secrets is left;
* code: every source file under CODE_DIR (``.py .js .ts .go .sh .yaml .yml .toml .json``,
  lockfiles apart), taken as free of secrets: the lines redaction changes, in all and among
  the lines that assign to a secret-named variable (those are the hard ones);
* lockfile: the ``integrity`` lines changed (the goal is none);
* time: 100 KB of code, and 100 KB of each hostile input (repetitions that cost an unbounded
  pattern the square of their length), in milliseconds.

``--repo`` measures another checkout of the pack (an older one, for a before/after figure).
Prints one JSON object; the changed lines go to standard error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

SUFFIXES = {".py", ".js", ".ts", ".go", ".sh", ".yaml", ".yml", ".toml", ".json"}
HOSTILE = {"pass_": "pass_", "mysql": "mysql ", "eyJ": "eyJ", "url": "a://", "a_": "a_", "quotes": "'", "-p": " -p",
           "password=": "password=x ", "../": "../", "?&": "?token=abcdefgh&"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("code", type=Path)
    parser.add_argument("--lockfile", type=Path)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--no-hostile", action="store_true", help="leave out the hostile inputs (minutes each for a quadratic redactor)")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    sys.path[:0] = [args.repo, str(here / "tests")]
    import secret_corpus

    from org.kernel.redact import redact
    from org.kernel.secret_patterns import ASSIGNMENT

    samples = secret_corpus.CORPUS + getattr(secret_corpus, "MORE", ())
    leaking = [s.kind for s in samples if any(secret in redact(s.text) for secret in s.secrets)]

    lines = changed = named = named_changed = 0
    sources = [p for p in sorted(args.code.rglob("*")) if p.suffix in SUFFIXES and p.is_file() and "lock" not in p.name
               and "node_modules" not in p.parts and p.stat().st_size < 500_000]
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        before, after = text.split("\n"), redact(text).split("\n")
        lines += len(before)
        for old, new in zip(before, after):
            assigns = bool(ASSIGNMENT.search(old))
            named += assigns
            if old != new:
                changed += 1
                named_changed += assigns
                print(f"{path}: {old.strip()[:120]}\n    -> {new.strip()[:120]}", file=sys.stderr)
    lock = {}
    if args.lockfile:
        text = args.lockfile.read_text(encoding="utf-8")
        pairs = list(zip(text.split("\n"), redact(text).split("\n")))
        lock = {"lockfile_integrity_lines": sum('"integrity"' in a for a, _ in pairs),
                "lockfile_integrity_changed": sum('"integrity"' in a and a != b for a, b in pairs),
                "lockfile_lines_changed": sum(a != b for a, b in pairs)}

    code_100k = "".join(p.read_text(encoding="utf-8", errors="replace") for p in sources)[:100_000]
    timings = {"code_100kb_ms": _ms(redact, code_100k)}
    for name, piece in {} if args.no_hostile else HOSTILE.items():
        timings[f"hostile_{name}_100kb_ms"] = _ms(redact, (piece * (100_000 // len(piece) + 1))[:100_000])
    print(json.dumps({"name": "redaction_corpora", "repo": args.repo, "kinds": len(samples), "kinds_caught": len(samples) - len(leaking),
                      "leaking": leaking, "code_files": len(sources), "code_lines": lines, "code_lines_changed": changed,
                      "secret_named_assignments": named, "secret_named_assignments_changed": named_changed, **lock, **timings}))


def _ms(function, text: str) -> float:
    start = time.perf_counter()
    function(text)
    return round((time.perf_counter() - start) * 1000, 1)


if __name__ == "__main__":
    main()
