"""The pack's module-level regular expressions compile on first use, not at import: every process
(the doctor, the XO, each command, the hooks in Agent-Zero) imports far more patterns than it uses."""

from __future__ import annotations

import copy
import json
import pickle
import re
import subprocess
import sys

from pack_commands import ROOT

from org.lazy_patterns import LazyPattern, lazy_pattern

#: the modules that keep re.compile: the installer's standard-library-only files (see test_install)
_COMPILED_AT_IMPORT = ("org.install.", "org.kernel.files")

_IMPORT_HOOKS = """
import json, re, re._compiler, sys
compiled = []
compile = re._compiler.compile
re._compiler.compile = lambda pattern, flags=0: (compiled.append(pattern), compile(pattern, flags))[1]
import org.a0.hooks
found = []
for name, module in sorted(sys.modules.items()):
    if name.startswith("org."):
        for value in vars(module).values():
            for item in [value, *(value if isinstance(value, (tuple, list)) else ())]:
                for p in item if isinstance(item, tuple) else (item,):
                    if isinstance(p, re.Pattern) or type(p).__name__ in ("LazyPattern", "_Uncompiled"):
                        found.append([name, p.pattern, isinstance(p, re.Pattern) or p.is_compiled])
print(json.dumps({"found": found, "compiled": [p for p in compiled if isinstance(p, (str, bytes))]}, default=repr))
"""


def test_importing_the_hooks_compiles_none_of_the_packs_patterns():
    done = subprocess.run([sys.executable, "-c", _IMPORT_HOOKS], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(done.stdout)
    ours = [(module, pattern) for module, pattern, _ in result["found"] if not module.startswith(_COMPILED_AT_IMPORT)]
    assert len({pattern for _, pattern in ours}) > 150  # the classifier's and the secret patterns, among others
    assert not [(module, pattern) for module, pattern, compiled in result["found"]
                if compiled and not module.startswith(_COMPILED_AT_IMPORT)]
    assert not {pattern for _, pattern in ours} & set(result["compiled"])  # the re module compiled none of them


def test_a_lazy_pattern_answers_as_the_compiled_one():
    source, flags = r"(?i)^(?P<word>ab+)c", re.MULTILINE
    lazy, compiled = lazy_pattern(source, flags), re.compile(source, flags)
    assert isinstance(lazy, LazyPattern) and not lazy.is_compiled
    assert lazy.pattern == compiled.pattern and not lazy.is_compiled  # readable without compiling
    text = "x\nABBC abc\nabbbc"
    assert lazy.search(text).span() == compiled.search(text).span() and lazy.is_compiled
    assert lazy.flags == compiled.flags and lazy.groups == compiled.groups and lazy.groupindex == compiled.groupindex
    assert lazy.match(text) is compiled.match(text) is None
    assert lazy.fullmatch("abbc").group("word") == compiled.fullmatch("abbc").group("word")
    assert lazy.sub(r"<\g<word>>", text) == compiled.sub(r"<\g<word>>", text)
    assert lazy.subn("-", text, count=1) == compiled.subn("-", text, count=1)
    assert lazy.split(text) == compiled.split(text) and lazy.findall(text) == compiled.findall(text)
    assert [m.span() for m in lazy.finditer(text, 2, 12)] == [m.span() for m in compiled.finditer(text, 2, 12)]
    assert repr(lazy) == repr(compiled) and lazy == compiled and hash(lazy) == hash(compiled)
    assert copy.deepcopy(lazy) is lazy and pickle.loads(pickle.dumps(lazy)).search(text).span() == compiled.search(text).span()
    assert lazy_pattern(rb"[0-9a-f]{4}").fullmatch(b"00ff").group() == b"00ff"
    assert lazy_pattern("x").flags == re.compile("x").flags  # the flags a compile adds (re.UNICODE) and inline ones
    assert lazy_pattern("(?s)x").flags == re.compile("(?s)x").flags
