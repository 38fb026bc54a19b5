"""Edits that cannot reach the code that runs: the files an edit writes, the files a run's
traceback went through, and whether one of those is another copy of a file the agent edited.

An agent that edits one copy of a file while the program imports another (a checkout copied
to ``/workspace`` while Python imports ``/testbed``; a package installed into site-packages
while the agent edits its source) changes nothing that runs, however long it goes on. A
traceback names the files that ran; one under another root, ending like a file the agent
edited, is the proof.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex

from org.lazy_patterns import lazy_pattern

from .classify import _CONTENT_KEYS, _HEREDOC, _OLD_TEXT_KEYS, _PATH_KEYS, NEW_TEXT_KEYS, _command_parts, command_of

#: paths remembered as written by the task's edits, and of each the lines they added (those long enough to tell)
WRITTEN_LIMIT, ADDED_LINES, ADDED_LINE_CHARS = 256, 64, 8
#: of a command, the lines of shell read for the files it writes, and the characters of each; of a
#: program, the characters read for the files it opens (a command is the agent's: it may be huge)
SHELL_LINES, SHELL_LINE_CHARS, PROGRAM_CHARS = 200, 4000, 65536
#: frames read from one traceback
FRAMES_LIMIT = 64
#: a copy is named by this many trailing parts at least (`lib/matplotlib/colorbar.py`): two
#: (`tests/conftest.py`) are shared by unrelated projects
TAIL_PARTS = 3

# a frame's file: Python's (`File "/a/b.py", line 3`, also behind pytest's `INTERNALERROR>`), and
# pytest's own (`/a/b.py:3: in f`: it names a file outside the folder it runs in by its whole path)
_FRAME_FILE = lazy_pattern(r'^(?:INTERNALERROR>)?[ \t]*File "(/[^"\n]+)", line \d+[^\n]*(?:\n(?:INTERNALERROR>)?[ \t]+(?!File ")(\S[^\n]*))?'
                           r'|^(/[^\s:"]+\.py):\d+: ', re.MULTILINE)
_PACKAGES_DIR = lazy_pattern(r"/(?:site|dist)-packages/")
# what a shell command writes: a redirect's target, `tee`'s files
_REDIRECT = lazy_pattern(r"(?<![<>&\d])>{1,2}\s*([\w./~-]+)")
# a program's literal file opened to write (`open("/a/b.py", "w")`, `Path("/a/b.py").write_text(`)
_OPENED_TO_WRITE = lazy_pattern(r"\bopen\(\s*['\"]([^'\"\n]+)['\"]\s*,\s*(?:mode\s*=\s*)?['\"][rbt+]*[wax]"
                                r"|\bPath\(\s*['\"]([^'\"\n]+)['\"]\s*\)\.write_(?:text|bytes)\(")
_CD = lazy_pattern(r"^cd\s+(\S+)\s*$")
#: git commands that write files of the folder they work in
_GIT_WRITES = frozenset({"apply", "am", "checkout", "restore", "stash", "reset", "pull", "merge", "cherry-pick", "rebase", "switch"})


def _absolute(path: str, cwd: str | None) -> str | None:
    """A written path made absolute and normal; None when it cannot be (relative, with no known folder)."""
    path = path.strip().strip("'\"")
    if not path or path.startswith("/dev/"):
        return None
    if not path.startswith("/"):
        if cwd is None or not cwd.startswith("/"):
            return None
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part, comments=False)
    except ValueError:  # an unclosed quote: the part's words as they stand
        return part.split()


def _operands(words: list[str], script_option: str | None = None) -> list[str]:
    """A command's words that are no option (nor the value of ``script_option``, `-e SCRIPT`)."""
    operands, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word == script_option:
            skip = True
        elif not word.startswith("-"):
            operands.append(word)
    return operands


def _shell_targets(part: str) -> list[str]:
    """The files one shell command writes: `sed -i`'s and `perl -pi`'s files, `cp`'s and `mv`'s
    destination, `tee`'s files, a redirect's target, and for a patch applied or a checkout, the
    folder it works in (``.``)."""
    targets = [m.group(1) for m in _REDIRECT.finditer(part)]
    words = _words(part)
    if not words:
        return targets
    program, rest = words[0], words[1:]
    if program in ("sed", "perl") and any(w.startswith("-i") or (program == "perl" and w.startswith("-") and "i" in w) for w in rest):
        operands = _operands(rest, "-e")
        targets += operands if "-e" in rest else operands[1:]  # without `-e`, the first operand is the script
    elif program in ("cp", "mv", "install", "rsync") and len(operands := _operands(rest)) >= 2:
        targets.append(operands[-1])
    elif program == "tee":
        targets += _operands(rest)
    elif program == "patch" or (program == "git" and rest[:1] and rest[0] in _GIT_WRITES):
        targets.append(".")  # the files a patch or a checkout names are not in the command: the folder it works in stands for them
    return targets


def _shell_lines(command: str) -> list[str]:
    """A command's lines of shell, without the bodies of its here-documents (a file's content,
    or a program's)."""
    lines, end = [], None
    for line in command.split("\n"):
        if end is not None:
            end = None if line.strip() == end else end
            continue
        if len(lines) == SHELL_LINES:
            break
        line = line[:SHELL_LINE_CHARS]
        lines.append(line)
        heredoc = _HEREDOC.search(line)
        end = heredoc.group(2) if heredoc else None
    return lines


def _lines(text: object) -> set[str]:
    return {line.strip() for line in text.split("\n")} if isinstance(text, str) else set()


def added_lines(args: object) -> frozenset[str]:
    """The lines an edit wrote that were not there before, as far as its arguments say (an
    editor's new text less its old, a whole new content): of some length, so that a line
    Python shows of a file that ran tells whether the edit is in it."""
    if not isinstance(args, dict) or command_of(args) is not None:
        return frozenset()
    new = set().union(*(_lines(args.get(k)) for k in NEW_TEXT_KEYS + _CONTENT_KEYS))
    old = set().union(*(_lines(args.get(k)) for k in _OLD_TEXT_KEYS))
    return frozenset(sorted(line for line in new - old if len(line) >= ADDED_LINE_CHARS)[:ADDED_LINES])


def written_paths(args: object) -> list[str]:
    """The absolute paths an edit's call writes to, as far as its arguments say: a file tool's
    path, the files a shell command writes (relative ones from the folder it `cd`s to), the
    files a program opens to write. A folder copied or moved stands for all the files under it."""
    if not isinstance(args, dict):
        return []
    command = command_of(args)
    if command is None:
        path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
        found = _absolute(path, None) if path else None
        return [found] if found else []
    cwd, written = None, []
    for line in _shell_lines(command):
        for part in _command_parts(line):
            cd = _CD.match(part)
            if cd:
                cwd = _absolute(cd.group(1), cwd)
            else:
                written += [_absolute(target, cwd) for target in _shell_targets(part)]
    written += [_absolute(m.group(1) or m.group(2), cwd) for m in _OPENED_TO_WRITE.finditer(command[:PROGRAM_CHARS])]
    return [path for path in written if path]


def traceback_files(text: str | None) -> dict[str, set[str]]:
    """The absolute paths the frames of a Python traceback in the text name (or of pytest's
    report of a failure), innermost last, each once, with the source lines Python showed of
    each (read from the file that ran)."""
    if not text or ('File "/' not in text and ".py:" not in text):
        return {}
    files: dict[str, set[str]] = {}
    for match in _FRAME_FILE.finditer(text):
        shown = files.setdefault(posixpath.normpath(match.group(1) or match.group(3)), set())
        if match.group(2):
            shown.add(match.group(2).strip())
        if len(files) >= FRAMES_LIMIT:
            break
    return files


#: a path kept on an outcome (and in a report) is at most this long, cut at its start: its end names the file
PATH_CHARS = 200


def path_tail(path: str, limit: int = PATH_CHARS) -> str:
    """A path shortened to its last ``limit`` characters: "…/lib/matplotlib/colorbar.py"."""
    return path if len(path) <= limit else "…" + path[-(limit - 1):]


def _copies(ran: str, edited: str) -> bool:
    """Whether the path that ran names another copy of the edited one: both end in the same
    ``TAIL_PARTS`` parts, or the one that ran is an installed package's file whose path inside
    site-packages (`mypkg/core.py`) ends the edited one."""
    if ran == edited:
        return False
    installed = _PACKAGES_DIR.search(ran)
    if installed is not None:
        inside = ran[installed.end():]
        if inside.count("/") >= 1 and edited.endswith("/" + inside):
            return True
    ran_parts, edited_parts = ran.split("/"), edited.split("/")
    return len(ran_parts) > TAIL_PARTS and len(edited_parts) > TAIL_PARTS and ran_parts[-TAIL_PARTS:] == edited_parts[-TAIL_PARTS:]


def _one_file(ran: str, edited: str) -> bool:
    """Whether the two paths are the same file here (a link, a bind mount); a path this process
    cannot see (a remote terminal, a replay) leaves it to the paths: two paths, two copies. If
    only one can be seen, nothing is known."""
    try:
        seen = (os.path.exists(ran), os.path.exists(edited))
        if seen == (True, True):
            return os.path.samefile(ran, edited)
        return seen != (False, False)
    except OSError:
        return True  # unknown: claim no copy


def ran_other_copy(command: str | None, output: str | None, written: dict[str, frozenset[str]]) -> tuple[str, str] | None:
    """:func:`other_copy` for a run: the file its traceback went through that is another copy of
    an edited one, and that one; None for a run that sets its own import path (`sys.path` in its
    code: it chose the copy it imports, to compare the original with the change)."""
    if command is not None and "sys.path" in command:
        return None
    return other_copy(traceback_files(output), written)


def other_copy(ran_files: dict[str, set[str]], written: dict[str, frozenset[str]]) -> tuple[str, str] | None:
    """The first file a traceback ran that is another copy of a file the task's edits wrote,
    with that file: ``(ran, edited)``. A file under a path the agent wrote (a file it copied
    over, a folder it copied) is its own work, not another copy; so is one of which Python
    showed a line the agent's edits added (a link the pack cannot see: the edit is in it)."""
    for ran, shown in ran_files.items():
        if any(ran == w or ran.startswith(w + "/") for w in written):
            continue
        edited = next((w for w in reversed(written) if _copies(ran, w)), None)
        if edited is not None and not (shown & written[edited]) and not _one_file(ran, edited):
            return ran, edited
    return None
