"""What a tool call did and what its output says: action kind, failure, error signature.

Agent-Zero gives the pack no exit code, and nearly every action goes through one tool
(``code_execution_tool``), so everything here is read from the call's arguments and
the output's text. Two rules keep it right on real sessions:

* A failure is the output of an action that could not do its job (when the output states
  the command's exit status, as some terminals print it, that decides, unless it is the 0 of
  a text filter ending the pipeline): a Python traceback,
  a shell diagnostic (command not found, no such file, permission denied, shell syntax
  error), a compiler error, a package manager's refusal, a timeout of Agent-Zero's own
  terminal. Output that merely *reports* problems is not: a test run with failing tests,
  a linter's findings, a ``grep`` that found nothing.
* An error has an identity, its signature: the line that names it, with volatile parts
  (numbers, addresses, temporary names) normalised, so the same error coming back after
  an edit is recognised, and two different errors of one class are not confused. Only a
  line that names this run's failure identifies it: a test run is identified by its failing
  tests and their errors (never by its summary line), a traceback cut off before its
  exception line, pip's closing words over a build that failed (its cause is the last
  exception the build printed above them), an empty output or a line also printed by the
  task's successful runs (``known`` lines: banners, warnings printed at every start) identify nothing.

Error types refine seed 001's taxonomy (network, CLI error, parsing, resource, logic):
``timeout`` and ``network`` are its transient network errors, ``not_found``,
``permission`` and ``execution`` its CLI errors, ``syntax`` its parsing errors,
``resource`` its resource errors, ``dependency`` a missing package or module, and
``test`` failing tests reported by a test run that itself worked.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from org.lazy_patterns import lazy_pattern

from .values import is_int

ActionKind = Literal["inspect", "edit", "run"]
#: The error type of a failure nothing names more precisely (also a scaffold's bare "it failed").
GENERIC_FAILURE = "execution"
#: Only the head and the tail of a long output are read.
SCAN_CHARS = 4000
#: The error line shown in steering and carried in SALUTE signals.
ERROR_LINE_CHARS = 160


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an output says: ``failed`` (the action could not do its job), the error type
    and the line naming the error (also for failing tests, which are not a failure)."""

    failed: bool
    error_type: str | None = None
    error_line: str | None = None
    #: the text the error's signature is computed from; None: the output names no error of its own
    identity: str | None = None


OK = Verdict(False)

_M = re.MULTILINE
# A Python exception line: "ValueError: bad", "django.db.utils.IntegrityError: x", "KeyboardInterrupt".
# (its module path, its name, and its message if it has one)
_MODULE_PATH, _MESSAGE = r"(?:[A-Za-z_]\w*\.)*", r"(?::[ \t]*(?P<msg>.*))?[ \t]*$"
_EXCEPTION_LINE = lazy_pattern(
    rf"^{_MODULE_PATH}(?P<name>[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|NotFound|Timeout)\w*){_MESSAGE}", _M)
# At the start of a line: an indented traceback is quoted inside another message (Python's
# "Error processing line 1 of …distutils-precedence.pth" warning printed at every start).
# (IPython's and Jupyter's header names the exception first: "TypeError    Traceback (most recent call last)")
_TRACEBACK = lazy_pattern(r"^(?:Traceback \(most recent call last\):|[A-Za-z_][\w.]*[ \t]+Traceback \(most recent call last\)[ \t]*$)", _M)
# A traceback's frame: the innermost one says where the error was raised (the file and function).
_LIBRARY_FILE = lazy_pattern(r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d[\d.]*[/\\]|^<frozen ")
_FRAME = lazy_pattern(r'^[ \t]*File "(?P<file>[^"\n]+)", line \d+(?:, in (?P<function>\S+))?', _M)
# What Python prints after a traceback's frames, whatever the exception is named (Django's
# "django.core.exceptions.ImproperlyConfigured: …", "AppRegistryNotReady: …", "StopIteration"):
# the first line after the last frame that is not indented. A module's own lower-case exception
# comes with its module and a message ("re.error: bad escape \m at position 0", "socket.gaierror: …").
_UNINDENTED = lazy_pattern(r"^(?=\S)", _M)
_RAISED = lazy_pattern(rf"{_MODULE_PATH}(?P<name>[A-Z]\w*|(?<=\.)[a-z]\w*(?=:)){_MESSAGE}", _M)
# An OS error printed without its traceback: "PermissionError: [Errno 13] Permission denied: '/x'".
_OS_ERROR_LINE = lazy_pattern(r"^(?:[A-Za-z_]\w*\.)*(?P<name>[A-Z]\w*Error): \[Errno \d+\] .*$", _M)
_EXCEPTION_TYPES = {
    "timeout": ("Timeout", "TimedOut"),
    "not_found": ("FileNotFoundError", "NotADirectoryError", "IsADirectoryError"),
    "permission": ("PermissionError",),
    "syntax": ("SyntaxError", "IndentationError", "TabError"),
    "network": ("ConnectionError", "ConnectionRefusedError", "ConnectionResetError", "URLError", "gaierror", "SSLError", "HTTPError"),
    "resource": ("MemoryError", "OSError: [Errno 28]", "RecursionError"),
    "dependency": ("ModuleNotFoundError", "ImportError", "DistributionNotFound", "PackageNotFoundError"),
}

# Test runners' own summary lines: a test run that reports failures still worked.
_TEST_SUMMARY = lazy_pattern(
    r"^(?:=+ .*\b\d+ (?:passed|failed|errors?|skipped|xfailed|deselected)\b.* in [\d.]+ ?s(?:econds)?\b.*=*"  # pytest (4.x: "in 0.03 seconds")
    r"|\d+ (?:passed|failed|errors?)(?:, \d+ \w+)* in [\d.]+ ?s(?:econds)?\b"  # pytest -q
    r"|Ran \d+ tests? in [\d.]+s"  # unittest, django
    r"|Tests?: +.*\b(?:passed|failed)\b.*"  # jest, vitest
    r"|test result: (?:ok|FAILED)\..*"  # cargo
    r"|(?:ok|FAIL|---)[ \t]+\S+[ \t]+(?:[\d.]+s|\(cached\))"  # go test
    r"|\d+ (?:examples?|tests?), \d+ failures?.*"  # rspec, minitest
    r"|(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+.*"  # maven (surefire)
    r"|\d+ tests? completed, \d+ failed.*"  # gradle
    r"|\d+% tests passed, \d+ tests? failed out of \d+"  # ctest
    r"|(?:Passed|Failed)! +- Failed: +\d+, Passed: +\d+.*|Total tests: \d+|Test run summary: \w.*)[ \t]*$", _M)  # dotnet test
_TEST_FAILURE_LINES = (
    lazy_pattern(r"^FAILED (?!\()(\S+)(?: - (.*))?$", _M),  # pytest -ra / short summary (not unittest's "FAILED (errors=1)")
    lazy_pattern(r"^E +((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b.*)$", _M),  # pytest's exception lines
    lazy_pattern(r"^(?:FAIL|ERROR): (\S+ \([\w.]+\))", _M),  # unittest
    lazy_pattern(r"^--- FAIL: (\S+)", _M),  # go
    lazy_pattern(r"^ +● (.+)$", _M),  # jest
    lazy_pattern(r"^\[ERROR\] +(?:\S+:\d+ .*|\S+ -- Time elapsed: .*<<< (?:FAILURE|ERROR)!)$", _M),  # maven (surefire)
    lazy_pattern(r"^(\S+ > .+) FAILED$", _M),  # gradle
    lazy_pattern(r"^\s+\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Not Run)\)", _M),  # ctest
    lazy_pattern(r"^ *[Ff]ailed (\S+) [\[(]\d[^\])\n]*[\])]$", _M),  # dotnet test
)
# pip's closing words for a build or install that failed in a subprocess: the cause is in that
# subprocess's output, which pip boxes (indented) above them, or was cut off (`| tail`)
_PIP_WRAPPER = lazy_pattern(r"(?:error: (?:metadata-generation-failed|subprocess-exited-with-error)"
                            r"|ERROR: (?:Could not build wheels for|Failed building wheel for) \S.*)[ \t]*")
_BOXED_EXCEPTION = lazy_pattern(rf"^[ \t]+{_MODULE_PATH}(?P<name>[A-Z]\w*(?:Error|Exception)\w*):[ \t]*\S.*$", _M)
_EXCEPTION_NAMED = lazy_pattern(r"\b[A-Z]\w*(?:Error|Exception)\b")
_TEST_SUCCESS = lazy_pattern(r"^(?:OK(?: \(.*\))?|=+ (?:\d+ (?:passed|skipped|deselected|xfailed|xpassed|warnings?)(?:, )?)+ in [\d.]+s.*=*"
                            r"|(?:\[INFO\] )?BUILD SUCCESS(?:FUL)?\b.*|100% tests passed, 0 tests failed out of \d+"  # maven, gradle; ctest
                            r"|Passed! +- Failed: +0\b.*|Test run summary: Passed!.*)[ \t]*$", _M)  # dotnet test

# Agent-Zero's terminal asked for a runtime it does not have.
_UNKNOWN_RUNTIME = lazy_pattern(r"\bThe runtime '[^'\n]*' is not supported\b")

# Shell and tool diagnostics, line-anchored so that file contents mentioning the words do not match.
_DIAGNOSTICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    # every alternative begins at a line's start: said once, outside them, the engine tries them
    # at line starts only, not at each character of the output
    (name, lazy_pattern(f"^(?:{pattern})", _M | re.IGNORECASE))
    for name, pattern in (
        ("timeout", r"^(?:\[SYSTEM: )?Returning control to agent after \d+ seconds (?:of execution|with no output)"
                    r"|^\[The command has no new output after \d+ seconds\b"  # OpenHands' terminal, like Agent-Zero's
                    r"|^Command(?:: \".*?\")? timed out\. Sen(?:t|ding) SIGINT to the process"  # OpenHands' older terminal
                    r"|^.*</command> timed out and has been killed\."  # mini-swe-agent: "The last command <command>…</command> …"
                    r"|^EXECUTION TIMED OUT\b"  # SWE-agent 0.x
                    r"|^\*\*Exited due to timeout\*\*"  # RepoLaunch
                    # (an exception's name, as in "ReadTimeout: …", not a parameter's "timeout: 30")
                    r"|^.*(?:\btimed out after|\b(?-i:Timeout(?:Expired)?: )|\boperation timed out|\bConnection timed out)\b.*$"),
        # zsh puts the name last: "zsh: command not found: x", and in a command it evaluates (Claude Code's
        # shell) "(eval):1: command not found: x", "(eval):cd:1: no such file or directory: src"
        ("not_found", r"^.*: (?:line \d+: )?[^\n:]*: command not found$"
                      r"|^(?:zsh|\(eval\))(?::\w+)?(?::\d+)?: (?:command not found|no such file or directory): .*$"
                      r"|^(?:\S+: )?(?:cannot (?:access|open|stat) |can't open file )?.*: (?:\[Errno 2\] )?No such file or directory$"
                      r"|^(?:\S+: )+(?:No such file or directory)$"
                      r"|^.*: \d+: (?:[^\s:/]+: not found|cd: can't cd to .*)$"  # dash (/bin/sh): "/bin/sh: 1: javac: not found"
                      r"|^fatal: (?:not a git repository|pathspec .* did not match|ambiguous argument).*$"
                      r"|^error reading .*: file not found$"  # Agent-Zero's text_editor
                      r"|^(?:File|Directory) \S+ not found$"),  # SWE-agent's open, search_dir
        ("permission", r"^.*: Permission denied$|^(?:\S+: )?Operation not permitted$|^.*\bEACCES\b.*$"
                       r"|^(?:\S+: )?Permission denied \([\w,-]+\)\.?$"),  # ssh: "Permission denied (publickey)."
        ("syntax", r"(?-i:^(?:SyntaxError|IndentationError|TabError): .*$)"
                   r"|^.*: (?:line \d+: )?syntax error(?: near unexpected token .*|: unexpected end of file.*)?$"
                   r"|^.*: (?:line \d+: )?unexpected EOF while looking for matching .*$"
                   r"|^.*: (?:line \d+: )?(?:unterminated quoted string|bad substitution)$"
                   r"|^.*: \d+: syntax error: .*$"),  # dash (/bin/sh): 'sh: 1: Syntax error: "(" unexpected'
        ("network", r"^.*(?:Connection refused|Could not resolve host|Temporary failure in name resolution|Network is unreachable"
                    r"|Name or service not known|getaddrinfo failed|\bECONNREFUSED\b|unable to resolve host address).*$"
                    # curl failing to resolve, connect or hear back: "curl: (7) Failed to connect to … Couldn't connect to server"
                    r"|^curl: \((?:5|6|7|35|52|56)\) .*$"
                    # a client that could not reach its server (docker's daemon, MySQL, kubectl's API server)
                    r"|^(?:[\w.-]+: )?(?:ERROR \d+ \(\w+\): )?(?:Can't|Cannot|Could not|Couldn't|Unable to) connect to\b.*$"),
        ("resource", r"^(?:.*: )?(?:Killed|Out of memory.*|No space left on device|Too many open files|Disk quota exceeded)[ \t]*$"),
        ("dependency", r"^(?:\S+: )?No module named .*$|^E: Unable to locate package .*$|^E: Package .* has no installation candidate$"
                       r"|^ERROR: (?:Could not find a version that satisfies|No matching distribution found).*$"
                       r"|^npm (?:ERR!|error) (?:code E404|404 ).*$|^error: package .* (?:not found|is not installed).*$"),
        ("execution", r"^[^\s:]+:\d+(?::\d+)?: (?:fatal )?error: .*$"  # gcc, clang, javac, mypy-style compilers
                      # ("Error:" with nothing after it is a label a script prints over the stderr it captured)
                      r"|(?-i:^(?:error|Error)(?:\[E\d+\])?: [ \t]*\S.*$)|^error TS\d+: .*$|^[^\s(]+\(\d+,\d+\): error .*$"
                      r"|(?-i:^\S[^\n]* : error [A-Z]{2,}\d+: .*$)"  # MSBuild and NuGet ("MSBUILD : error MSB1006: Property is not valid.")
                      r"|^fatal: .*$|^npm (?:ERR!|error) .*$|(?-i:^ERROR: (?!pip's dependency resolver)[ \t]*\S.*$)"
                      r"|^[\w.+-]+: (?:fatal )?error: .*$"  # a program's own error (argparse's "pip: error: unknown command")
                      r"|^curl: \(\d+\) .*$"  # curl's other errors ("curl: (22) The requested URL returned error: 500")
                      r"|^jq: error\b.*$|(?-i:^parse error: .* at line \d+, column \d+$)"
                      # an uncaught error with its stack (Node: "TypeError: x is not a function", then "    at …" frames),
                      # a Go panic, a Rust panic, a Ruby error, and `go run`'s exit status
                      r"|(?-i:^(?:Uncaught )?(?:[A-Za-z_$][\w$]*\.)*[A-Z]\w*(?:Error|Exception)\b.*(?=\n[ \t]+at (?:[^\n]*\()?\S+:\d+:\d+\)?[ \t]*$))"
                      r"|(?-i:^panic: \S.*$|^thread '[^'\n]*' panicked at .*$|^\S+:\d+:in [`'].*\(\w*(?:Error|Exception)\w*\)$)"
                      r"|(?-i:^exit status [1-9]\d*$)"
                      r"|(?-i:^Exception in thread \"[^\"\n]*\" .*$)"  # the JVM's uncaught exception
                      # a program killed by a signal, as the shell reports it
                      r"|(?-i:^(?:Segmentation fault|Bus error|Illegal instruction|Floating point exception|Aborted)"
                      r"(?: \(core dumped\))?[ \t]*$|^.*: line \d+: +\d+ (?:Segmentation fault|Bus error|Illegal instruction"
                      r"|Floating point exception|Aborted)\b.*$)"
                      r"|(?-i:^E: .*$)"  # apt and dpkg: "E: Unable to correct problems, you have held broken packages."
                      r"|^g?make(?:\[\d+\])?: \*\*\* .*$"  # a recipe that failed; a compiler's line above it names why
                      r"|^error (?:reading|writing) \S.*: .*$"  # Agent-Zero's text_editor
                      r"|^.*" + _UNKNOWN_RUNTIME.pattern + ".*$"  # Agent-Zero's terminal: nothing ran
                      # Maven: its first error line with content, not its closing advice
                      r"|(?-i:^\[ERROR\] (?!\s*$|-> \[Help|For more information|Re-run Maven|To see the full|After correcting|\s+mvn ).*$)"
                      r"|^.*(?:returned non-zero exit status [1-9]\d*|exited with (?:exit )?(?:code|status) [1-9]\d*).*$"),
    )
)
# An editor refusing an edit: SWE-agent's linted `edit` ("Your changes have NOT been applied"),
# str_replace editors ("No replacement was performed"), Claude Code's Edit (its old text not
# found, found more than once, or the same as the new) and its Edit and Write on a file not read
# first or changed since it was read, an editor's `create` over a file that is
# there (OpenHands, SWE-agent 1.x), Agent-Zero's `text_editor` patch ("error patching a.py: file
# changed since last read"). The edit did not happen: a failure,
# named by the linter's first finding when it gives one.
_EDIT_REJECTED = lazy_pattern(r"^.*(?:Your changes have NOT been applied|No replacement was performed|did not appear verbatim"
                            r"|String to replace not found|matches of the string to replace, but replace_all is false"
                            r"|No changes to make: old_string and new_string|Cannot overwrite files using command `create`"
                            r"|File has not been read yet\. Read it first|File has been modified since read).*$"
                            r"|^error patching \S.*: .*$", _M)  # Agent-Zero's text_editor: its patch went nowhere
# A tool's own error mark before its message (Claude Code's tools: "<tool_use_error>File does
# not exist.</tool_use_error>"; OpenHands' editor: "ERROR:" on a line of its own, then "Invalid
# `path` parameter: … does not exist."): the call failed, whatever the message says.
_TOOL_ERROR_TAGS = lazy_pattern(r"</?tool_use_error>")
_TOOL_ERROR = lazy_pattern(r"\A\s*(?:<tool_use_error>|ERROR:[ \t]*\n)\s*(?P<message>[^\n]*?)\s*(?:</tool_use_error>|$)", _M)
# The same editor's refusals where no "ERROR:" comes before them (SWE-agent 1.x's
# `str_replace_editor`): a path not there or not absolute, a line range or parameter it cannot
# take, nothing to undo. The call did nothing.
_EDITOR_REFUSAL = lazy_pattern(r"\A\s*(?P<message>(?:The path \S+ (?:does not exist|is not an absolute path|is a directory and only)"
                               r"|Invalid `\w+`|Parameter `\w+` is required|The `view_range` parameter is not allowed"
                               r"|No edit history found for )[^\n]*?)\s*$", _M)
_EDIT_FINDING = lazy_pattern(r"^- (?:line \d+ col \d+: )?([A-Z]\d{3,4} .*)$", _M)
# A list of errors with no finding in it is the check's own failure (SWE-agent's flake8 crashing on
# a project's setup.cfg: "- Error code '#' supplied to 'ignore' option does not match …", or "- \"local[X101]\"
# failed during execution due to FileNotFoundError(…)"): no edit through that editor goes in.
_CHECK_FAILURE = lazy_pattern(r"^- ((?!\"[^\"]*\", line \d+)(?=.*(?:(?:Error|Exception)\b|\bfailed\b)).*\S.*)$", _M)
#: How a refused edit's reason starts when the editor's own check failed, not the edit.
CHECK_FAILED = "the editor's check failed: "
_NO_REPLACEMENT = lazy_pattern(r"^No replacement was performed[.,]\s+(?=\S)")
# The agent's own text an editor quotes back in its refusal (OpenHands: "old_str `…` did not appear
# verbatim in /a.py", "Multiple occurrences of old_str `…` in lines [3, 9]"): the action, already
# known, not the result; quoted, a retry with only its indentation changed would be another result.
_QUOTED_OLD_TEXT = lazy_pattern(r"(old_str) `.*?`(?= did not appear verbatim| in lines \[| is the same as new_str `)", re.DOTALL)
# and the new text after it, when the reason is that the two are the same (SWE-agent: "old_str `…` is
# the same as new_str `…`.")
_QUOTED_NEW_TEXT = lazy_pattern(r"(is the same as new_str) `.*`", re.DOTALL)
# The argument it quotes back before its reason: the new text when it is the same as the old
# ("Invalid `new_str` parameter: <the agent's text>. No replacement was performed. `new_str` and
# `old_str` must be different."), the path of a `create` over a file that is there ("Invalid `path`
# parameter: /a.py. File already exists at: /a.py. …"): the reason, not the argument, is the line.
_QUOTED_ARGUMENT = lazy_pattern(r"Invalid `(?:new_str|path)` parameter: .*?"
                                r"(?=No replacement was performed\. `new_str` and `old_str` must be different|File already exists at: )", re.DOTALL)
# The refusal of an edit that would change nothing (its new text is its old text).
_UNCHANGED_EDIT = lazy_pattern(r"`new_str` and `old_str` must be different|old_string and new_string are exactly the same"
                              r"|old_str is the same as new_str")
# An editor's `create` refused over a file that is there (OpenHands, SWE-agent 1.x): nothing written.
_FILE_EXISTS = lazy_pattern(r"File already exists at: .*?Cannot overwrite files using command `create`\.?")
#: How a refused edit's line starts: the edit changed nothing, so its error is no file's error (no churn).
EDIT_REFUSED = "edit not applied: "
# The refusals about the text to replace alone (not found, or found more than once): whatever
# the new text, the same old text is refused the same way again.
_OLD_TEXT_REFUSED = lazy_pattern(r"did not appear verbatim|Multiple occurrences of old_str|String to replace not found"
                               r"|matches of the string to replace, but replace_all is false")


def edit_refused(error_line: str | None) -> bool:
    """The error line says an editor refused the edit: nothing changed."""
    return (error_line or "").startswith(EDIT_REFUSED)


def check_failed(error_line: str | None) -> bool:
    """The editor refused the edit because its own check failed, whatever the edit was."""
    return (error_line or "").startswith(EDIT_REFUSED + CHECK_FAILED)


# The text to replace is there more than once: the edit must say which occurrence, not match better.
_AMBIGUOUS_OLD_TEXT = lazy_pattern(r"Multiple occurrences of old_str|matches of the string to replace, but replace_all is false")


def old_text_refused(error_line: str | None) -> bool:
    """The editor refused the edit for its text to replace (not there, or there more than once)."""
    return edit_refused(error_line) and _OLD_TEXT_REFUSED.search(error_line) is not None


# A program the shell could not find by its bare name (`javac: command not found`): it is not
# installed here, which no edit of the project changes.
_MISSING_PROGRAM = lazy_pattern(r"(?:^|: )(?:line \d+: )?([^\s:/=]+): command not found$|^(?:zsh|\(eval\))(?::\d+)?: command not found: ([^\s/]+)$"
                              r"|^\S+: \d+: ([^\s:/]+): not found$")


def missing_program(error_line: str | None) -> str | None:
    """The program, named without a path, the error line says is not installed (not a variable
    assignment the shell ran as a command: `A.B=1 cmd`, a name with a dot); None when it says not.
    (Read at every check with a failure: the words every form ends in come before the pattern,
    which is searched for at every place of the line.)"""
    if not error_line or "not found" not in error_line:
        return None
    match = _MISSING_PROGRAM.search(error_line)
    return None if match is None else next(name for name in match.groups() if name)


# A build tool that found no Java where JAVA_HOME or PATH points (Maven's wrapper, Gradle): the
# JDK is missing, which setting JAVA_HOME to another guess does not change.
_NO_JDK = lazy_pattern(r"JAVA_HOME is not defined correctly|JAVA_HOME is not set and no 'java' command could be found")


# Text sent as a command: the shell runs its first word as a program ("DISCUSSION", "The", "Were
# still facing errors. Lets"). A label in capitals or a sentence's opening word names no program.
_OPENERS = (r"The|There|These|This|That|It|Its|We|I|Let's|Lets|Here|After|Since|Now|Next|Then|First|Finally|However|So"
            r"|Step|Based|Looking|Great|Okay|Also|But|To|In")
_PROSE_RUN = lazy_pattern(rf"(?:^|: )(?:line \d+: |\d+: )?(?:[A-Z]{{4,}}|[^:\n]* [^:\n]*|(?:{_OPENERS})): (?:command )?not found$")


def prose_as_command(error_line: str | None) -> bool:
    """The error line says the shell ran words of text as a program (reasoning sent as the command)."""
    return _PROSE_RUN.search(error_line or "") is not None


# What was sent as the command, known by how it opens, when the shell refused it: source code (a
# Java class, Python imports and a function), which belongs in a file, not in quotes; or text (a
# label in capitals, a sentence), whose apostrophes leave the shell looking for a closing quote.
_SOURCE_CODE = lazy_pattern(r"^`?\s*(?:(?:public|private|protected|abstract|final|static) \w|class \w+\s*[({:]"
                          r"|(?:package|import) [\w.]+(?:\.\*)?;|import [\w.]+ as \w|from [\w.]+ import \w"
                          r"|def \w+\s*\(|#include\s*[<\"]|@[A-Z]\w*(?:\(|\s))")
_PROSE = lazy_pattern(rf"^`?\s*(?:[A-Z]{{4,}}(?![\w=])|(?:{_OPENERS})\s)")
_SHELL_REFUSED = lazy_pattern(r"syntax error near unexpected token|syntax error: unexpected|unexpected EOF while looking for"
                            r"|: (?:command )?not found$")


def sent_as_command(command: str | None, error_line: str | None) -> str | None:
    """"code_command" or "prose_command" when the shell refused a command that opens like source
    code (`class Parent {`, `import numpy as np`) or like text (`DISCUSSION`, `Let's check`)."""
    if not _SHELL_REFUSED.search(error_line or ""):
        return None
    if _SOURCE_CODE.search(command or ""):
        return "code_command"
    return "prose_command" if _PROSE.search(command or "") else None


# A module imported while it is still being imported (an ImportError or an AttributeError): two
# modules import each other, or a file of the agent's own named like one Python imports (a
# `types.py` beside the script) hides it. Nothing is missing, so installing is no fix.
_CIRCULAR_IMPORT = lazy_pattern(r"partially initialized module .*most likely due to a circular import")
# Django refusing a script before it reaches the code under work: settings not configured, the app
# registry not ready, a model of the script's own outside any app, no secret key, the contrib apps'
# tables not created. A script written anew the same way fails the same way: the setup is the fix.
_DJANGO_SETUP = lazy_pattern(r"settings are not configured|(?:Apps|Models) aren't loaded yet|App registry isn't ready yet"
                           r"|doesn't declare an explicit app_label|The SECRET_KEY setting must not be empty"
                           r"|no such table: (?:django_\w+|auth_(?:user|group|permission)\w*)")
# A package manager that does not know the name asked for: installing it again will not help.
_UNKNOWN_PACKAGE = lazy_pattern(r"Unable to locate package|has no installation candidate|No matching distribution found"
                              r"|Could not find a version that satisfies|^npm (?:ERR!|error) (?:code E404|404 )|^error: package .* not found")

# A name the standard library no longer has: removed or renamed in a newer Python than the code
# (`inspect.formatargspec`, `collections.MutableSet`, the `imp` module), as an old package or an old
# checkout meets a new interpreter. Nothing is missing to install, nor is its path or spelling wrong.
# Imported from a file outside Python's own library, the name is the agent's file hiding the module.
_STDLIB_NAME_MISSING = lazy_pattern(r"cannot import name '[\w.]+' from '(?P<imported>[\w.]+)'(?: \((?P<path>[^)\n]*)\)?)?"
                                    r"|module '(?P<attribute>[\w.]+)' has no attribute '\w+'")
_REMOVED_MODULE = lazy_pattern(r"No module named '(?:distutils|imp|asynchat|asyncore|smtpd|aifc|audioop|cgi|cgitb|chunk|crypt|imghdr|mailcap"
                               r"|msilib|nis|nntplib|ossaudiodev|pipes|sndhdr|spwd|sunau|telnetlib|uu|xdrlib|lib2to3)(?:\.[\w.]+)?'")
_PYTHON_LIBRARY = lazy_pattern(r"[/\\]lib[/\\]python[\d.]*[/\\]|[/\\]Lib[/\\]")
# A here-document whose line breaks went as the two characters `\n` (a model escaping them twice):
# the command is one line, its closing word never comes on a line of its own, and the shell
# waits for it until the call runs out of time. Run again, it waits again.
_HEREDOC_ON_ONE_LINE = lazy_pattern(r"<<-?[ \t]*(['\"]?)\w+\1\\n")


def heredoc_never_closed(command: str | None) -> bool:
    """The command's here-document is written on one line, with `\n` for its line breaks."""
    return bool(command) and "<<" in command and _HEREDOC_ON_ONE_LINE.search(command) is not None


def stdlib_name_missing(error_line: str | None) -> bool:
    """The error says the standard library of this Python lacks a name the code uses."""
    if not error_line or ("name" not in error_line and "attribute" not in error_line):
        return False
    if _REMOVED_MODULE.search(error_line):
        return True
    found = _STDLIB_NAME_MISSING.search(error_line)
    if found is None:
        return False
    module = found.group("imported") or found.group("attribute")
    path = found.group("path")
    if path is not None and (not _PYTHON_LIBRARY.search(path) or "-packages" in path):
        return False  # a file of the agent's own, or an installed package, not the standard library
    return module.partition(".")[0] in sys.stdlib_module_names


@lru_cache(maxsize=1024)  # worded at every steering, and read for every failure PACE weighs
def advice_kind(error_type: str | None, error_line: str | None, command: str | None = None) -> str:
    """Which advice fits a failure: its error type's, except for an edit the editor refused
    (no path or quoting to fix: the edit does not match the file, its text to replace is there
    more than once, its new text is its old, a `create` over a file that is there, or the
    editor's own check failed), a call the tool refused for its arguments (nothing ran: the
    call is what to fix), source code or text sent as a command (``command``: no quoting to
    fix, no program to install), a here-document sent on one line (it never ends), a program that is not installed
    (no path or command name to correct, no JAVA_HOME to guess), a package the package
    manager does not know (installing it again is no fix), a module imported while it is
    still being imported (nothing to install: an import cycle, or a file shadowing a module),
    a name the standard library of this Python no longer has (nothing to install either) and
    Django refusing a script in its setup (the code under work was not reached)."""
    if error_type == "busy" and error_line and error_line.startswith(WAITS_IN_INTERPRETER):
        return "interpreter"
    if check_failed(error_line):
        return "failed_check"
    if unknown_tool(error_line):
        return "unknown_tool"
    if arguments_refused(error_line):
        return "bad_arguments"
    if edit_refused(error_line):
        if _AMBIGUOUS_OLD_TEXT.search(error_line or ""):
            return "ambiguous_edit"
        if _FILE_EXISTS.search(error_line or ""):
            return "file_exists"
        return "unchanged_edit" if _UNCHANGED_EDIT.search(error_line or "") else "refused_edit"
    sent = sent_as_command(command, error_line)
    if sent:
        return sent
    if heredoc_never_closed(command):
        return "open_heredoc"
    if error_type == "not_found" and prose_as_command(error_line):
        return "prose_command"
    if (error_type == "not_found" and missing_program(error_line)) or _NO_JDK.search(error_line or ""):
        return "missing_program"
    if error_type == "dependency" and _UNKNOWN_PACKAGE.search(error_line or ""):
        return "unknown_package"
    if _CIRCULAR_IMPORT.search(error_line or ""):
        return "circular_import"
    if stdlib_name_missing(error_line):
        return "stdlib_removed"
    if _DJANGO_SETUP.search(error_line or ""):
        return "django_setup"
    return error_type or "none"


#: `cd ..`, `cd src`: a move relative to where the shell is, so the same command goes elsewhere each time.
_RELATIVE_CD = lazy_pattern(r"^cd\s+(?![/~])\S+\s*$")
# Files put back as they were (`git checkout -- a.py`, `git restore`, `git stash`, `git reset --hard`),
# or removed by a command that only removes (`rm -rf build` before each configure: what a run made since).
_REVERT = lazy_pattern(r"(?:^|[;&|]\s*)git (?:checkout|restore|stash|reset)\b|\A\s*rm\s[^;&|\n]*\Z")


def moves_relative(command: str | None) -> bool:
    return _RELATIVE_CD.match((command or "").strip()) is not None


def reverts(command: str | None) -> bool:
    """The command puts files back as they were, or only removes some: done again, it undoes
    whatever changed since (what a run in between made)."""
    return bool(command) and _REVERT.search(command) is not None


# An exit status some terminals print with the output (mini-swe-agent's tag, OpenHands' line, in
# its older form with the command's id: "[Command -1 finished with exit code 0]"): when the output
# states it, it decides whether the command worked.
# Claude Code's Bash opens a failing output with it, and says nothing when the command exited 0.
_OPENING_EXIT_CODE = lazy_pattern(r"\AExit code (\d+)[ \t]*$", _M)
_EXIT_STATUS = lazy_pattern(r"<returncode>(\d+)</returncode>|^\[?(?:The command completed|Command(?: -?\d+)? finished) with exit code (\d+)\.?\]*[ \t]*$"
                          r"|^exit code: (\d+)[ \t]*\Z"  # RepoLaunch's terminal closes every output so
                          r"|" + _OPENING_EXIT_CODE.pattern, _M)

# Linters and type checkers that report findings: their "errors" are findings about the code.
_LINT_SUMMARY = lazy_pattern(
    r"^(?:Found \d+ errors? in \d+ files? \(checked \d+ source files?\)|Found \d+ errors?\.|Your code has been rated at .*"
    r"|\d+ problems? \(\d+ errors?, \d+ warnings?\)|✖ \d+ problems?.*|\*{13} Module \S+"
    r"|\S+:\d+:(?:\d+:)? [CRWEFI]\d{4}[:( ].*"  # pylint: "a.py:1:0: C0114: Missing module docstring"
    r"|\S+:\d+:\d+: [EWFCN]\d{3} .*)[ \t]*$", _M)  # flake8, pycodestyle: "a.py:1:1: E302 expected 2 blank lines"

_VOLATILE = (
    (lazy_pattern(r"0x[0-9a-fA-F]+"), "0x#"),
    (lazy_pattern(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (lazy_pattern(r"/tmp/[\w.-]+"), "/tmp/<tmp>"),
    (lazy_pattern(r"\d+(?:\.\d+)?"), "#"),
    (lazy_pattern(r"\s+"), " "),
)
# What changes from one run of the same command to the next without saying anything about
# the result: times, durations, addresses, temporary paths, process ids, ids, a shell's line counter.
_RUN_VOLATILE = lazy_pattern(
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"  # timestamps
    r"|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?\b"  # clock times
    r"|\b\d+(?:\.\d+)?[ \t]?(?:s|ms|us|µs|ns|sec|secs|seconds?|minutes?)\b"  # durations
    r"|0x[0-9a-fA-F]+|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"  # addresses, uuids
    r"|/(?:tmp|var/folders)/[\w.@-]+(?:/[\w.@-]+)*|\btmp[\w-]{6,}"  # temporary paths and names
    r"|\b(?:pid|PID|process|Process)[ =:#]*\d+|(?<=\(node:)\d+(?=\))"  # node's "(node:33128) ExperimentalWarning: …"
    r"|(?<=sh: line )\d+(?=: )"  # a shell's running line counter ("/bin/bash: line 47857: javac: command not found")
    # where a stack frame points in its file: an edit above it moves it, the failure stays the same
    r'|(?<=", line )\d+(?=, in )|(?<=\.java:)\d+(?=\))|(?:(?<=\.js:)|(?<=\.ts:))\d+:\d+(?=\)|\n)')


# Searches that exit 1 when nothing matched: the status answers the question, it is no failure.
_SEARCH = lazy_pattern(r"^(?:e|f)?grep\b|^(?:rg|ag|ack|pgrep|which)\b|^git grep\b")


# The shell's prompt a terminal ends its output with (Agent-Zero's: "root@a0:/a0/usr/workdir# ").
_PROMPT_LAST = lazy_pattern(r"^(?:\([^)\n]*\) )?[\w.-]+@[\w.-]+:[^\n]*[#$][ \t]*\Z", re.MULTILINE)


def _bare(text: str | None) -> str:
    """The output without what the terminal adds: its marks, the exit status it states and
    the prompt it ends with."""
    bare = _EXIT_STATUS.sub("", _TERMINAL_MARKS.sub("", text or "")).replace("<output>", "").replace("</output>", "")
    return _PROMPT_LAST.sub("", bare.rstrip()).strip()


def found_nothing(command: str | None, text: str | None) -> bool:
    """A search that found nothing: the call's last command is a search (``grep``, ``rg``,
    ``which``) and its output is an exit status of 1 and nothing else (but the command, where
    a terminal echoes it), as an empty output is where no status is printed. (Another command exiting 1 in silence failed: `ls` in a
    folder deleted under it.)"""
    parts = _command_parts(command, pipes=True)
    return bool(parts) and _SEARCH.match(parts[-1]) is not None and stated_exit(text) == 1 and not _without_echo(_bare(text), command)


# A search tool's whole answer when nothing matched (SWE-agent's `search_dir`, `search_file` and
# `find_file`; Claude Code's Grep and Glob; a code search's "Could not find method save in class
# Product", "There is no method with name x in file a.py", "The method x does not appear in the
# codebase"), and a terminal's when it got nothing at all (Agent-Zero's, SWE-agent's "Your command
# ran successfully and did not produce any output.").
_SEARCH_NO_MATCH = (r"No matches found\b|No files found\b|Found 0 (?:matches|files)\b"
                    r"|Could not find (?:code|class|method|function|file|symbol)\b.* in (?:the codebase|file|class)\b"
                    r"|There is no (?:class|method|function|file)\b.* in (?:the codebase|file|class)\b"
                    r"|The (?:class|method|function|file)\b.* does not appear in the codebase\b")
_NO_MATCH = lazy_pattern(rf"\A(?:{_SEARCH_NO_MATCH}|\[SYSTEM: No output returned\."
                       r"|Your command ran successfully and did not produce any output\.)[^\n]*\Z", re.IGNORECASE)
_SEARCH_NO_MATCH_ONLY = lazy_pattern(rf"\A(?:{_SEARCH_NO_MATCH})[^\n]*\Z", re.IGNORECASE)


#: an output longer than this shows something: a terminal's marks, an exit status, a prompt and
#: a search's no-match notice are a few short lines (read on every call: a long output is not scanned)
NOTHING_CHARS = 2000


def shows_nothing(text: str | None, command: str | None = None) -> bool:
    """An output with nothing in it: no text but an exit status and ``command``, where a terminal
    echoes the command it runs (OpenHands' and RepoLaunch's do), or a search's notice that
    nothing matched."""
    if not text or text.isspace():
        return True
    if len(text) > NOTHING_CHARS:
        return False
    bare = _without_echo(_bare(text), command) if command else _bare(text)
    return not bare or _NO_MATCH.match(bare) is not None


def no_match_notice(text: str | None) -> bool:
    """A search tool's whole answer that nothing matched: an answer about the code, whatever the
    scaffold calls the call (one that counts it failed still looked and found nothing)."""
    return bool(text) and len(text) <= NOTHING_CHARS and _SEARCH_NO_MATCH_ONLY.match(_bare(text)) is not None


# A pipeline that ends in a text filter (`python repro.py 2>&1 | tail -20`): the shell's exit status
# is the filter's, whatever the command before it did, unless `pipefail` is set.
_FILTERED = lazy_pattern(r"(?<![|&])\|&?\s*(?:head|tail|grep|egrep|fgrep|rg|sed|awk|cut|sort|uniq|wc|tee|cat|less|more|tr|nl|column)"
                       r"\b[^|;&\n]*$")


def filter_sets_status(command: str | None) -> bool:
    """The command's exit status, as an output states it, is a text filter's (see ``_FILTERED``):
    a 0 says nothing of the command before it, so the output's text decides, as where no status
    is printed (a status that is not 0 still says the pipeline failed)."""
    text = (command or "").strip()
    return "pipefail" not in text and _FILTERED.search(text.splitlines()[-1] if text else "") is not None


def stated_exit(text: str | None) -> int | None:
    """The exit status the output states (mini-swe-agent's tag, OpenHands' line, Claude Code's
    opening line); None when it states none."""
    status = _EXIT_STATUS.search(text or "")
    return None if status is None else int(next(code for code in status.groups() if code is not None))


def opening_exit_code(text: str | None) -> int | None:
    """The exit status an output opens with (``Exit code 1``: Claude Code's Bash marks its
    failures so, and says nothing when the command exited 0); None when it does not."""
    match = _OPENING_EXIT_CODE.match(text or "")
    return int(match.group(1)) if match else None


def run_text(text: str) -> str:
    """An output with what differs between runs of the same command without meaning
    anything (times, durations, addresses, temporary paths, process ids) and whitespace normalised."""
    return " ".join(_RUN_VOLATILE.sub("#", text).split())


#: line keys are kept to 30 bits: small integers of one size, so the remembered lines take constant memory
_KEY_BITS = (1 << 30) - 1


def line_key(line: str) -> int:
    """A line's identity among the task's outputs (whitespace and volatile parts ignored)."""
    return hash(run_text(line)) & _KEY_BITS


def line_keys(text: str) -> list[int]:
    """The keys of an output's lines (its head and tail), as :func:`line_key` makes them."""
    sample = text if len(text) <= 3000 else text[:2000] + "\n" + text[-1000:]
    return [hash(" ".join(line.split())) & _KEY_BITS for line in _RUN_VOLATILE.sub("#", sample).splitlines() if line.strip()]


# What a terminal adds to the lines it returns: a TTY's carriage returns, OpenHands' tags of the
# interpreter (and an IPython cell's working folder) appended to the last line
# ("TypeError: …[Python Interpreter: /opt/…/bin/python]", "[Jupyter current working directory: …]")
# and the "OBSERVATION:" its CodeAct agent opens each observation with.
_TERMINAL_MARKS = lazy_pattern(r"\r+(?=\n)|\x1b(?:\[[0-9;?]*[A-Za-z]|[=>])|\[(?:Jupyter )?(?:Python [Ii]nterpreter|[Cc]urrent working directory): [^\]\n]*\]"
                             r"|\AOBSERVATION:[ \t]*(?:\n|\Z)")


# A file's content fenced by the tool that shows it (Agent-Zero's `text_editor`: "{path} 40 lines",
# then the numbered lines between ">>>" and "<<<"): the file's words, not what happened.
_FENCED_CONTENT = lazy_pattern(r"^>>>[ \t]*\n.*?^<<<[ \t]*$", re.MULTILINE | re.DOTALL)


def _sample(text: str) -> str:
    sample = text if len(text) <= 2 * SCAN_CHARS else text[:SCAN_CHARS] + "\n" + text[-SCAN_CHARS:]
    return _FENCED_CONTENT.sub("", _TERMINAL_MARKS.sub("", sample))


def _line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= ERROR_LINE_CHARS else line[:ERROR_LINE_CHARS - 1] + "…"


def _last_line(text: str) -> str:
    stripped = text.rstrip()
    return stripped[stripped.rfind("\n") + 1:].strip()


def _exception_type(name: str) -> str:
    for error_type, names in _EXCEPTION_TYPES.items():
        if any(name.startswith(n) or name == n for n in names):
            return error_type
    return "execution"


def _named(error_type: str, line: str) -> Verdict:
    return Verdict(True, error_type, _line(line), line)


# A line of a file shown with its line numbers: SWE-agent's window ("415:    :type timeout: …"),
# `cat -n`, `nl` and OpenHands' view ("   415\t…"), Claude Code's Read ("   415→…"). What it
# says is the file's content, not what happened to the command. (A clock time, "12:01:33 …", is not one.)
_FILE_LINE = lazy_pattern(r"[ \t]*\d+(?::(?!\d)|\t|→)")


def _first(pattern: re.Pattern[str], sample: str, known: Any, start: int = 0) -> re.Match[str] | None:
    """The first match whose line is neither one of the task's ``known`` lines nor a numbered line of a file shown."""
    for match in pattern.finditer(sample, start):
        if _FILE_LINE.match(sample, sample.rfind("\n", 0, match.start()) + 1):
            continue
        if not known or line_key(match.group(0)) not in known:
            return match
    return None


def _raised(sample: str, frames: list[re.Match[str]]) -> re.Match[str] | None:
    """The line after a traceback's last frame, when it reads as an exception line."""
    after = _UNINDENTED.search(sample, frames[-1].end()) if frames else None
    return _RAISED.match(sample, after.start()) if after is not None else None


def _traceback_verdict(sample: str, known: Any) -> Verdict | None:
    headers = list(_TRACEBACK.finditer(sample))
    if not headers:
        return None
    frames = list(_FRAME.finditer(sample, headers[-1].end()))
    # else the first unindented exception line after the header
    raised = _raised(sample, frames) or _EXCEPTION_LINE.search(sample, headers[-1].start())
    if raised is None:
        return Verdict(True, "execution")  # the exception line was cut off: failed, but nothing names it
    if raised.group("name") == "BrokenPipeError":
        return OK  # the reader of a pipe (`| head`) stopped early: the command itself worked
    if known and line_key(raised.group(0)) in known:
        return Verdict(True, _exception_type(raised.group("name")), _line(raised.group(0)))  # printed by working runs too
    # where it was raised: the innermost frame of the project's code (a library's raises the
    # same message for every caller); the same message raised somewhere else (the fix moved
    # it to the next call site) is another failure
    frames = [f for f in frames if f.end() <= raised.start()]
    own = [f for f in frames if not _LIBRARY_FILE.search(f.group("file"))] or frames
    where = f"\n{own[-1].group('file')}:{own[-1].group('function') or ''}" if own else ""
    return Verdict(True, _exception_type(raised.group("name")), _line(raised.group(0)), raised.group(0) + where)


def _test_verdict(sample: str) -> Verdict | None:
    """A test run that worked: identified by its failing tests and their errors together,
    so the same test failing with another error is another result."""
    if not _TEST_SUMMARY.search(sample):
        return None
    failures = []
    for pattern in _TEST_FAILURE_LINES:
        failures.extend(m.group(0) for m in pattern.finditer(sample))
    if not failures:
        return OK if _TEST_SUCCESS.search(sample) or "fail" not in sample.lower() else Verdict(False, "test", "tests failed")
    errors = [m.group(0) for m in _EXCEPTION_LINE.finditer(sample) if m.group("msg") is not None]
    line = failures[0]
    if errors and not _EXCEPTION_NAMED.search(line):
        line += f": {errors[0]}"  # unittest's "ERROR: test_a (tests.T)" names the test; the error says what happened
    return Verdict(False, "test", _line(line), "\n".join(sorted(set(failures)) + sorted(set(errors))))


# A command the terminal did not run because an earlier one still runs there: Agent-Zero's "Terminal
# session 0 might be still running", or its note of a dialog with nothing new above it (the earlier
# program still waits at its question); OpenHands' "Your command "x" is NOT executed. The previous
# command is still running". What the output shows above such a note is the earlier command's.
_BUSY_TERMINAL = lazy_pattern(r"\bTerminal session \d+ might be still running\b|\bis NOT executed\. The previous command is still running\b")
_DIALOG_NOTE_ALONE = lazy_pattern(r"\A\s*\[SYSTEM: Potential dialog detected in output\. Returning control to agent after \d+ seconds\b[^\n]*\Z")
#: the identity of every such answer: whatever the command, its cause is the one still running
BUSY_TERMINAL = "the terminal is still running an earlier command"


# An interactive interpreter the terminal was left in (a bare `python`, a heredoc that reached
# Python, a script stopped at `breakpoint()`): what is sent next is its input, not a shell command.
# Its prompt is the terminal's last line, under what the tool adds after it (its note that the
# process may still run, that it ran out of time, the exit status, the shell prompt of a harness).
# A doctest's `>>>` lines and a `python - <<EOF` script's output never end on a bare prompt.
_INTERPRETER_PROMPT = lazy_pattern(r"(?P<prompt>>>>|\.\.\.|\((?:Pdb|ipdb)\)|ipdb>|In \[\d+\]:)\Z")
# the tool's own notes after what the terminal showed (besides the exit status and the shell's
# prompt, read as everywhere: _STATUS_LINE, _PROMPT_LAST)
_TOOL_NOTE_LINE = lazy_pattern(r"\[SYSTEM: |\*\*Exited due to timeout\*\*\Z")
_INTERPRETERS = {">>>": "Python", "...": "Python", "(Pdb)": "pdb", "(ipdb)": "pdb", "ipdb>": "pdb"}
#: the start of the line naming such a prompt, for the advice to know it
WAITS_IN_INTERPRETER = "the terminal waits at an interactive "


def interpreter_prompt(text: str | None) -> str | None:
    """The line naming the interactive interpreter the terminal waits in, when its prompt is
    the output's last line ("the terminal waits at an interactive Python prompt (`>>>`)"); else None.
    (Python's continuation prompt `...` counts only where its `>>>` shows too.)"""
    if not text or not any(mark in text for mark in (">>>", "db)", "ipdb>", "In [")):
        return None
    tail = text[-SCAN_CHARS:]
    # line by line from the end: a pattern over the whole tail would try every place of a long run of blanks
    last = next((line for line in map(str.strip, reversed(tail.splitlines())) if line and not _added_by_the_tool(line)), "")
    found = _INTERPRETER_PROMPT.match(last)
    if found is None or (found.group("prompt") == "..." and ">>>" not in tail):
        return None
    prompt = found.group("prompt")
    return f"{WAITS_IN_INTERPRETER}{_INTERPRETERS.get(prompt, 'IPython')} prompt (`{prompt}`)"


def _added_by_the_tool(line: str) -> bool:
    """A line the tool or its terminal adds after what ran printed: its note, the exit status, the shell's prompt."""
    return _TOOL_NOTE_LINE.match(line) is not None or _STATUS_LINE.fullmatch(line) is not None or _PROMPT_LAST.fullmatch(line) is not None


# Commands that take no time: one that ran out of time was never run (the terminal is still
# busy with an earlier command, or its shell is gone), as `pwd` and `echo hi` after a test
# runner left in watch mode
_INSTANT = lazy_pattern(r"(?:pwd|echo|printf|true|whoami|id|date|hostname|cd|ls)(?:\s|$)")


def instant(command: str | None) -> bool:
    """Every command of the line takes no time to run (`pwd`, `cd /x && ls`, `echo hi`)."""
    parts = _command_parts(command, pipes=True)
    return bool(parts) and all(_INSTANT.match(part) for part in parts)


def busy_terminal(text: str | None) -> str | None:
    """The terminal's note that it did not run the command, an earlier one still running there; else None."""
    if not text:
        return None
    busy = _BUSY_TERMINAL.search(text) if "still running" in text else None
    if busy is not None:  # the note's whole line
        end = text.find("\n", busy.end())
        return text[text.rfind("\n", 0, busy.start()) + 1:None if end < 0 else end]
    if len(text) > NOTHING_CHARS or "Potential dialog detected" not in text:
        return None  # the note alone is a line
    bare = _bare(text)
    return bare if _DIALOG_NOTE_ALONE.match(bare) else None


# Agent-Zero's answer to a call of a tool it does not have (also with no name at all: "Tool  not
# found"), followed by its whole list of tools, whose words name nothing of this call.
_TOOL_NOT_FOUND = r"Tool \S*\s*not found\."
_UNKNOWN_TOOL = lazy_pattern(rf"\A\s*({_TOOL_NOT_FOUND})(?= Available tools:)")
_UNKNOWN_TOOL_LINE = lazy_pattern(rf"\A{_TOOL_NOT_FOUND}\Z")


def unknown_tool(error_line: str | None) -> bool:
    """The error line says the agent called a tool that is not there."""
    return bool(error_line) and error_line.startswith("Tool ") and _UNKNOWN_TOOL_LINE.match(error_line) is not None


# A tool refusing a call for its arguments before doing anything: OpenHands' and SWE-agent's
# editor ("Parameter `old_str` is required for command: str_replace.", after "ERROR:" or not),
# OpenHands checking a call against the tool's schema ('Missing required argument "task_list"
# for "plan" command in tool call task_tracker').
_REFUSED_ARGUMENT = r"(?:Parameter `\w+` is required for command: \w+|Missing required argument \"[^\"\n]+\" for \"[^\"\n]+\" command in tool call \S+)"
_ARGUMENTS_REFUSED = lazy_pattern(rf"\A\s*(?:ERROR:[ \t]*\n\s*)?(?P<message>{_REFUSED_ARGUMENT}[^\n]*?)\s*$", _M)
_ARGUMENTS_REFUSED_LINE = lazy_pattern(rf"\A{_REFUSED_ARGUMENT}")


def arguments_refused(error_line: str | None) -> bool:
    """The error line says the tool refused the call for its arguments: it ran nothing."""
    return bool(error_line) and error_line.startswith(("Parameter `", "Missing required")) and _ARGUMENTS_REFUSED_LINE.match(error_line) is not None


def did_not_run(error_type: str | None, error_line: str | None) -> bool:
    """The call ran nothing: a terminal still running an earlier command, a tool that is not
    there, a runtime the terminal does not have, a call the tool refused for its arguments. No
    step of an approach; its repeats are loops. (Read for every failure of every check: the
    words come before any pattern.)"""
    if error_type == "busy":
        return True
    if not error_line:
        return False
    return (unknown_tool(error_line) or arguments_refused(error_line)
            or ("is not supported" in error_line and _UNKNOWN_RUNTIME.search(error_line) is not None))


def _pip_verdict(sample: str, wrapper: re.Match[str], known: Any) -> Verdict:
    """A build or install pip ran that failed: named by the last exception its subprocess
    printed above pip's closing words; with none there (cut off), failed, but nothing names
    it: pip's words are the same for every cause."""
    causes = [m for m in _BOXED_EXCEPTION.finditer(sample, 0, wrapper.start()) if not (known and line_key(m.group(0)) in known)]
    if not causes:
        return Verdict(True, "execution", _line(wrapper.group(0)))
    return _named(_exception_type(causes[-1].group("name")), causes[-1].group(0).strip())


def classify_output(text: str | None, known: Any = None, filter_status: bool = False) -> Verdict:
    """What a tool's output says (see the module's docstring). ``known``: the keys
    (:func:`line_key`) of lines the task's successful outputs printed, which name nothing.
    ``filter_status``: the exit status the output states is a text filter's (:func:`filter_sets_status`),
    so a 0 decides nothing."""
    if not text:
        return OK
    sample = _sample(text)
    waits = interpreter_prompt(sample)
    if waits is not None:  # the command went to the interpreter, whatever it answered
        return Verdict(True, "busy", waits, waits)
    busy = busy_terminal(sample)
    if busy is not None:
        return Verdict(True, "busy", _line(busy), BUSY_TERMINAL)
    unknown = _UNKNOWN_TOOL.match(sample)
    if unknown is not None:
        return _named("not_found", unknown.group(1))
    refused = _ARGUMENTS_REFUSED.match(sample)
    if refused is not None:
        return _named("execution", refused.group("message"))
    rejected = _EDIT_REJECTED.search(sample)
    if rejected is not None and ("old_str `" in sample or "` parameter: " in sample):
        sample = _QUOTED_ARGUMENT.sub("", _QUOTED_NEW_TEXT.sub(r"\1", _QUOTED_OLD_TEXT.sub(r"\1", sample)))
        rejected = _EDIT_REJECTED.search(sample)
    if rejected is not None:
        finding = _EDIT_FINDING.search(sample)
        check = None if finding else next(reversed(_CHECK_FAILURE.findall(sample)), None)
        # a str_replace editor's "No replacement was performed, " (or ". ") is followed by the reason
        reason = _NO_REPLACEMENT.sub("", _TOOL_ERROR_TAGS.sub("", rejected.group(0)).strip())
        if finding:
            reason = finding.group(1)
        elif check:
            reason = CHECK_FAILED + check
        line = EDIT_REFUSED + reason
        return _named("syntax" if re.search(r"\bE999\b|SyntaxError|IndentationError", line) else "execution", line)
    marked = _TOOL_ERROR.match(sample) or _EDITOR_REFUSAL.match(sample)
    if marked is not None:
        message = marked.group("message") or "tool error"
        return _named(message_kind(message), message)
    tests = _test_verdict(sample)
    if tests is not None:
        return tests
    status = stated_exit(sample)
    if status == 0 and not filter_status:
        return OK  # the output says the command exited 0: what it printed is what it was asked to print
    traceback = _traceback_verdict(sample, known)
    if traceback is not None:
        return traceback
    os_error = _first(_OS_ERROR_LINE, sample, known)
    if os_error is not None:
        return _named(_exception_type(os_error.group("name")), os_error.group(0))
    last = _last_line(sample)
    raised = _EXCEPTION_LINE.fullmatch(last) if last else None
    if raised is not None and (raised.group("msg") or "").strip() and not (known and line_key(last) in known):
        # output that ends with an exception and its message ("Error:" with nothing after it is a
        # label a script prints, over the stderr it captured: Python never prints one so)
        return _named(_exception_type(raised.group("name")), last)
    linted = _LINT_SUMMARY.search(sample) is not None
    for error_type, pattern in _DIAGNOSTICS:
        if linted and error_type == "execution":
            continue
        match = _first(pattern, sample, known)
        if match and _PIP_WRAPPER.fullmatch(match.group(0)):
            return _pip_verdict(sample, match, known)
        if match:
            return _named(error_type, match.group(0))
    if linted:
        return OK  # a linter that reported findings did its job, whatever status it exits with (pylint: 24)
    if status:
        return Verdict(True, "execution")  # a non-zero exit status, and no line that names why
    return OK


# Tools that bring back text from elsewhere: a web search, a page or document, the memory, another
# agent's reply (Agent-Zero's own, Claude Code's web tools and sub-agent). What they found is content:
# a question titled with the error, a page quoting a traceback, a subordinate's account of a failure.
REPORTING_TOOLS = frozenset({"search_engine", "document_query", "knowledge_tool", "memory_load", "browser_agent", "skills_tool",
                             "call_subordinate", "a2a_chat", "WebSearch", "WebFetch", "Task"})
# Any tool named for fetching or searching (MCP servers' `fetch`, `brave_web_search`, `tavily-search`,
# `firecrawl_scrape`, `get-library-docs`; Agent-Zero names them `server.tool`) that runs no command.
_REPORTING_NAMES = lazy_pattern(r"(?:^|[_.:-])(?:search|fetch|scrape|crawl|docs)(?:[_.:-]|$)", re.IGNORECASE)
_CHANGING_NAMES = lazy_pattern(r"(?:^|[_.:-])(?:replace|write|edit|create|delete|remove|update|patch|insert|apply|save|git)(?:[_.:-]|$)",
                             re.IGNORECASE)
# A reporting tool's own failure is one line: an error ("ConnectionError: Name or service not known"),
# or its words for it ("Search Engine search failed: …", "Error processing document: …").
_REPORT_FAILED = lazy_pattern(r"(?:Error\b|❌|.{0,60}\b(?:failed(?::| to\b)|not available\b|argument missing\b))[^\n]*")


def reports_content(tool: str, args: Any) -> bool:
    """The tool brings back text from elsewhere (see ``REPORTING_TOOLS``)."""
    return tool in REPORTING_TOOLS or (_REPORTING_NAMES.search(tool) is not None and _CHANGING_NAMES.search(tool) is None
                                       and isinstance(args, dict) and command_of(args) is None and not _edits_a_file(args))


def classify_report(text: str | None) -> Verdict:
    """What a reporting tool's output says of the call: a failure only when the tool says, in a
    line of its own, that it failed; what it found (more than that line) names no failure."""
    line = (text or "").strip()
    if "\n" in line:
        return OK
    verdict = classify_output(line)
    return verdict if verdict.failed or not _REPORT_FAILED.fullmatch(line) else _named("execution", line)


#: A line a terminal adds around what the command printed: its exit status, mini-swe-agent's output tags.
_STATUS_LINE = lazy_pattern(r"</?output>|" + _EXIT_STATUS.pattern, _M)


_MISSING = lazy_pattern(r"\bdoes not exist\b")


def message_kind(message: str) -> str:
    """The error type of a message a tool gave for a call that failed (its own error mark, or
    the scaffold's flag): what it says is missing ("File does not exist.", "Path does not exist:
    x") was not found, else the shell diagnostic it is, else a failure of the call."""
    if _MISSING.search(message) is not None:
        return "not_found"
    return next((kind for kind, pattern in _DIAGNOSTICS if pattern.search(message)), GENERIC_FAILURE)


#: the command's lines a terminal's echo is looked for: a longer command's echo is cut short in the quote anyway
ECHO_LINES = 20
#: how alike an echo and the command it echoes are (a doubled letter in 40: 0.99)
ECHO_LIKENESS = 0.95


def _echoed_lines(command: str | None) -> list[str]:
    """The command's lines as a terminal's echo of them is looked for, whitespace collapsed."""
    return [" ".join(line.split()) for line in (command or "").splitlines()[:ECHO_LINES] if line.strip()]


#: a line that reports something that passed (a test, a check): never what a failure is quoted by
_PASS_REPORT = lazy_pattern(r"^(?:PASSED|PASS|ok|OK|✓|✔)(?:\s|:|$)")


def telling_line(text: str | None, known: Any = None, command: str | None = None) -> str | None:
    """For a failure nothing names: its first line the task's successful outputs did not
    also print and that is not the command echoed, the shell's prompt or a report of something
    that passed, to quote in steering (never an identity). When the output's start holds no
    such line (a list of tests that passed, then the failures), its end is read too."""
    text = text or ""
    line = _first_telling(text[:SCAN_CHARS], known, _echoed_lines(command))
    if line is None and len(text) > SCAN_CHARS:
        line = _first_telling(text[-SCAN_CHARS:].partition("\n")[2], known, [])  # from the first whole line
    return line


def _first_telling(text: str, known: Any, echo: list[str]) -> str | None:
    for line in _TERMINAL_MARKS.sub("", text).splitlines():
        bare = line.strip()
        if (not bare or _STATUS_LINE.fullmatch(bare) or _PROMPT_LAST.fullmatch(bare) or _PASS_REPORT.match(bare)
                or (known and line_key(line) in known)):
            continue
        if echo and _echoes(" ".join(line.split()), echo[0]):
            echo.pop(0)  # a terminal that prints each line it runs (RepoLaunch's; its TTY doubles a letter now and then)
            continue
        return _line(line)
    return None


def _without_echo(text: str, command: str | None) -> str:
    """The output without the command's lines a terminal echoed before it (RepoLaunch's)."""
    echo = _echoed_lines(command)
    lines = text.splitlines()
    while lines and echo and (not lines[0].strip() or _echoes(" ".join(lines[0].split()), echo[0])):
        if lines.pop(0).strip():
            echo.pop(0)
    return "\n".join(lines).strip()


def _echoes(line: str, command_line: str) -> bool:
    """The output's line is the command's, as a terminal echoes it: the same, or with a letter doubled here and there."""
    if line == command_line:
        return True
    if len(line) < len(command_line):
        return False  # a letter doubled makes the echo longer: a shorter line is what the command printed (`echo "…"`, its text)
    matcher = difflib.SequenceMatcher(None, line, command_line, autojunk=False)
    return matcher.real_quick_ratio() >= ECHO_LIKENESS and matcher.quick_ratio() >= ECHO_LIKENESS and matcher.ratio() >= ECHO_LIKENESS


def error_signature(error_line: str | None) -> str | None:
    """The identity of an error: its line with numbers, addresses and temporary names normalised."""
    if not error_line:
        return None
    normal = error_line
    for pattern, replacement in _VOLATILE:
        normal = pattern.sub(replacement, normal)
    return hashlib.sha256(normal.strip().encode("utf-8", "replace")).hexdigest()[:16]


# ----------------------------------------------------------------------------- action kinds

#: Tools (or tool:method) that only look: files, searches, listings, the web.
INSPECT_TOOLS = frozenset({"search_engine", "document_query", "knowledge_tool", "memory_load", "browser_agent", "vision_load"})
_EDIT_COMMANDS = frozenset({"create", "str_replace", "insert", "write", "patch", "edit", "undo_edit", "append", "replace", "delete"})
_INSPECT_COMMANDS = frozenset({"view", "read", "open", "show", "list", "search", "find"})
_EDITOR_COMMANDS = _EDIT_COMMANDS | _INSPECT_COMMANDS
_SHELL_INSPECT = lazy_pattern(
    r"^(?:cat|less|more|head|tail|ls|ll|tree|pwd|wc|file|stat|du|df|which|whereis|type|echo|printf|env(?=\s*(?:$|[|;&>]))|printenv|id|whoami|"
    r"grep|egrep|fgrep|rg|ag|ack|find|locate|fd|diff|cmp|nl|sort|uniq|cut|awk|jq|"
    r"open|goto|scroll_up|scroll_down|search_dir|search_file|find_file|str_replace_editor view|"
    r"git (?:status|diff|log|show|branch|blame|grep|ls-files|remote)|sed -n|python3? -c ['\"]?import \w+; ?print)\b")
_SHELL_EDIT = lazy_pattern(
    r"(?:^|(?<!\\)[;&|]\s*)(?:sed -i|perl -p?i|patch\b|git (?:apply|checkout|restore|stash|reset)|mv |cp |rm |mkdir |touch |chmod |tee |"
    r"create |edit \d+:\d+|truncate |str_replace_editor (?:create|str_replace|insert|undo_edit) )|(?<![<>&\d])>{1,2}(?!&)\s*[\w./~-]|<<-?\s*['\"]?\w+['\"]?\s*>|cat\s*>")


def command_of(args: Any) -> str | None:
    """The command or code a call runs, when its arguments hold one. An editor's ``command``
    (``view``, ``str_replace`` with a ``path``: OpenHands', SWE-agent's and Anthropic's
    ``str_replace_editor``) says what it does to the file; it runs nothing."""
    if isinstance(args, dict):
        for key in ("code", "command", "cmd", "script"):
            value = args.get(key)
            if isinstance(value, str):
                if key == "command" and value in _EDITOR_COMMANDS and _has_text(args, _PATH_KEYS):
                    return None
                return value
    return None


#: Other scaffolds' and MCP servers' file tools, by name: they read, list or search.
_INSPECT_NAMES = lazy_pattern(r"(?:^|[_.:-])(?:read|view|grep|glob|ls|list|search|find|fetch|cat|open)(?:[_.:-]|$)"
                            r"|^(?:read|view|grep|glob|ls|list|search|find|web_?fetch|web_?search)\w*$", re.IGNORECASE)


#: Argument names of file tools: the file, the text to replace, a whole new content.
_PATH_KEYS = ("file_path", "path", "filename", "target_file", "file")
_OLD_TEXT_KEYS = ("old_string", "old_str")
NEW_TEXT_KEYS = ("new_string", "new_str")
_CHANGE_KEYS = _OLD_TEXT_KEYS + NEW_TEXT_KEYS + ("edits", "diff", "patch")
_CONTENT_KEYS = ("content", "file_text", "contents")


def _has_text(args: dict, keys: tuple[str, ...]) -> bool:
    return any(isinstance(args.get(k), str) for k in keys)


def _edits_a_file(args: dict) -> bool:
    """Arguments shaped like a file edit whatever the tool is called: a path with the text to
    replace and its replacement, or with the whole new content."""
    return _has_text(args, _PATH_KEYS) and (any(k in args for k in _CHANGE_KEYS) or _has_text(args, _CONTENT_KEYS))


#: A file editor by name (Agent-Zero's `text_editor`, whose `read`, `write` and `patch` reach the
#: hooks as one tool): called with a file and no text to write, it reads.
_EDITOR_NAMES = lazy_pattern(r"(?:^|[_.:-])(?:text_?)?editor$", re.IGNORECASE)

#: Agent-Zero's code runtimes that run the code as a program, not as shell.
_PROGRAM_RUNTIMES = frozenset({"python", "nodejs"})
#: The start of a program given in the command line (`python -c "…"`, `node -e '…'`)
_INLINE_START = r"\b(?:python3?|node|ruby|perl)(?:\s+-\w+)*?\s+-[ce]\s+"
#: A program given in the command line, its quoted body included: its `>` is no redirect.
_INLINE_PROGRAM = lazy_pattern(rf"({_INLINE_START})([\"'])(?:\\.|(?!\2)[^\\])*\2")
_STARTS_INLINE_PROGRAM = lazy_pattern(_INLINE_START)
#: A heredoc fed to an interpreter: its body is a program. (A one-line `python -c` that writes a
#: file mostly writes the task's output, not its code: it stays a run.)
_FED_TO_PROGRAM = lazy_pattern(r"^(?:python3?|node|ruby|perl)\b[^<\n]*<<")
#: A program that writes a file: Python's `open(…, "w")`, `write_text`, Node's `fs.writeFileSync`.
_WRITES_FILE = lazy_pattern(r"\bopen\((?:[^()]|\([^()]*\)){0,300}?,\s*(?:mode\s*=\s*)?['\"][rbt+]*[wax][rbt+]*['\"]|\.open\(\s*['\"][rbt+]*[wax][rbt+]*['\"]"
                          r"|\.write_(?:text|bytes)\("
                          r"|\bfs\.(?:writeFile|appendFile)(?:Sync)?\(")


#: "cd repo && …", "cd repo; …": where the action runs, not the action.
_CD_PREFIX = lazy_pattern(r"^(?:cd [^;&|]+(?:&&|;)\s*)+")
#: a command handed whole to a shell (`bash -lc '…'`, `sh -c "…"`): the action is the command inside
_SHELL_WRAPPER = lazy_pattern(r"^(?:ba|z)?sh\s+-l?c\s+(['\"])(.*)\1\s*$", re.DOTALL)


def _without_cd(command: str) -> str:
    """The action a command line takes: without a leading `cd DIR &&`, and out of a shell it is handed to whole."""
    text = command.strip()
    wrapped = _SHELL_WRAPPER.match(text)
    return _CD_PREFIX.sub("", wrapped.group(2).strip() if wrapped else text)


def _command_parts(text: str | None, pipes: bool = False) -> list[str]:
    """The commands a line chains with `&&`, `;` or `||`, and with ``pipes`` those it pipes (`a && b | c; d`)."""
    return [p.strip() for p in re.split(r"&&|;|\|\||\|" if pipes else r"&&|;|\|\|", text or "") if p.strip()]


# What stands before a part's program: variable assignments, and `export`, `env`, `sudo`, `exec`, `time`, `nice`.
_BEFORE_PROGRAM = lazy_pattern(r"^(?:(?:[A-Za-z_]\w*=\S*|export|env|sudo|exec|time|nice)\s+)*")


def programs_run(command: str | None) -> set[str]:
    """The programs a command line runs by name (the first word of each part it chains), as
    ``missing_program`` names them."""
    names = set()
    for part in _command_parts(_without_cd(command or "")):
        word = _BEFORE_PROGRAM.sub("", part).split(maxsplit=1)
        if word and "/" not in word[0] and "=" not in word[0]:
            names.add(word[0])
    return names


def _runs_program(args: Any) -> bool:
    """Agent-Zero runs the call's code as a program (`runtime: python`, `nodejs`)."""
    runtime = args.get("runtime") if isinstance(args, dict) else None
    return isinstance(runtime, str) and runtime in _PROGRAM_RUNTIMES


def _program_edits(args: Any, command: str) -> bool:
    """A program that rewrites a file: Agent-Zero's program runtimes, or a heredoc fed to an interpreter."""
    first = _without_cd(command).partition("\n")[0]
    return (_runs_program(args) or _FED_TO_PROGRAM.match(first) is not None) and _WRITES_FILE.search(command) is not None


#: A heredoc's opening (`<< EOF`, `<<-'EOF'`) and the word that ends its body.
_HEREDOC = lazy_pattern(r"<<-?\s*(['\"]?)(\w+)\1")


def runs_what_it_writes(args: Any) -> bool:
    """The call writes a whole file from a heredoc, then runs it (`cat > /tmp/t.py << 'EOF'` …
    `EOF`, then `python /tmp/t.py`): an edit whose run is in the same call, its output the run's."""
    command = command_of(args)
    if command is None or "<<" not in command:
        return False
    first, _, rest = _without_cd(command).partition("\n")
    written, heredoc = _SHELL_CREATE.match(first), _HEREDOC.search(first)  # `cat > f << EOF`, `cat << EOF > f`
    if written is None or written.group("file") is None or heredoc is None:
        return False
    lines = rest.split("\n")
    end = next((i for i, line in enumerate(lines) if line.strip() == heredoc.group(2)), None)
    if end is None:
        return False
    name = written.group("file").rpartition("/")[2]
    return any(name in part and action_kind("", {"command": part}) == "run"
               for line in lines[end + 1:] for part in _command_parts(line))


def carries_program(args: Any) -> bool:
    """The call's code is the program it runs, written anew in the call: Agent-Zero's `runtime:
    python` or `nodejs`, a heredoc fed to an interpreter, `python -c "…"`."""
    command = command_of(args)
    if command is None:
        return False
    if _runs_program(args):
        return True
    first = _without_cd(command).partition("\n")[0][:500]  # the interpreter is named at the start
    return _FED_TO_PROGRAM.match(first) is not None or _STARTS_INLINE_PROGRAM.match(first) is not None


def action_kind(tool: str, args: Any) -> ActionKind:
    """Whether a call looks (``inspect``), changes files (``edit``) or runs something (``run``)."""
    if tool in INSPECT_TOOLS:
        return "inspect"
    if isinstance(args, dict) and command_of(args) is None:
        if _edits_a_file(args):
            return "edit"
        if _INSPECT_NAMES.search(tool):
            return "inspect"
    if isinstance(args, dict):
        for key in ("command", "op", "action", "operation", "method"):
            value = args.get(key)
            if isinstance(value, str) and " " not in value.strip():
                if value in _EDIT_COMMANDS:
                    return "edit"
                if value in _INSPECT_COMMANDS:
                    return "inspect"
    command = command_of(args)
    if command is None:
        return "inspect" if _EDITOR_NAMES.search(tool) and isinstance(args, dict) and _has_text(args, _PATH_KEYS) else "run"
    if _program_edits(args, command):
        return "edit"  # a program that rewrites a file (`runtime: python`, `python3 - <<'EOF'` … `write_text(…)`)
    if _runs_program(args):
        return "run"  # a program, not shell: `x > 1` redirects nothing
    text = _without_cd(command)  # "cd repo && …": what follows is the action
    first, _, _ = text.partition("\n")
    # a heredoc's body is the program's input (`python3 << EOF`), and `python -c "…"` the program:
    # not shell, so their `>` redirects nothing
    shell = first if "<<" in first else _INLINE_PROGRAM.sub(r"\1''", text)
    if _SHELL_EDIT.search(shell) and not _keeps_a_record(shell):
        return "run" if _prepares_a_run(shell) else "edit"
    if _SHELL_INSPECT.match(first):
        return "inspect"
    return "run"


# The repository's history or state written to a file (`git diff > patch.txt`): a record of the work, no change to it.
_HISTORY_KEPT = lazy_pattern(r"^git (?:diff|show|log|status)\b[^<>|]*>{1,2}\s*[\w./~-]+$")


def _keeps_a_record(text: str) -> bool:
    """A look whose output is kept in a file, and looks besides (`git diff > patch.txt && cat
    patch.txt`, the submission step of many scaffolds): it writes no code, so it is a look."""
    parts = _command_parts(text)
    return (any(_HISTORY_KEPT.match(part) for part in parts)
            and all(_HISTORY_KEPT.match(part) or part.startswith("cd ") or (_SHELL_INSPECT.match(part) and not _SHELL_EDIT.search(part))
                    for part in parts))


# Clearing a build's folder, making one, or removing scratch files a run left (`rm -f /tmp/run.log`).
_SCRATCH_FILE = r"(?:/tmp/|/var/tmp/)\S*|\S+\.(?:log|out)"
_MAKES_ROOM = lazy_pattern(rf"^(?:rm\s+-\w*[rR]\w*\s|mkdir\b|chmod\b|rm\s+(?:-\w+\s+)*(?:{_SCRATCH_FILE})(?:\s+(?:{_SCRATCH_FILE}))*\s*$)")


def _prepares_a_run(text: str) -> bool:
    """A command that only clears or makes room around a run (`rm -rf build && make`,
    `mkdir -p out && python gen.py`, `rm -f /tmp/run.log && go test ./...`, `python app.py >
    out.txt`, `go test ./... | tee /tmp/test.log`): what it does is the run."""
    runs = False
    for part in _command_parts(text):
        if part.startswith("cd ") or _MAKES_ROOM.match(part):
            continue
        bare = _SCRATCH_TARGET.sub("", part)
        if _SHELL_EDIT.search(bare) or _SHELL_CREATE.match(part):
            return False  # it changes files of the work
        runs = runs or not _SHELL_INSPECT.match(bare)
    return runs


#: A whole file written: `cat > f`, `cat << EOF > f` (the ``file``), SWE-agent's `create f`, the editor's `create`.
_SHELL_CREATE = lazy_pattern(r"^(?:cat\s*(?:<<-?\s*['\"]?\w+['\"]?\s*)?>\s*(?P<file>[\w./~-]+)|create \S+\s*$|str_replace_editor create )")
# Work on the workspace, not on the code in it: fetching, checking out, moving, removing,
# making folders, and output kept in a log or a temporary file.
_SHELL_WORKSPACE = lazy_pattern(r"^(?:rm|mv|cp|mkdir|touch|chmod|chown|ln|git (?:checkout|stash|reset|restore|clone|fetch|pull|switch|clean|init))\b")
_SCRATCH_TARGET = lazy_pattern(r"(?:(?<![<>&\d])>{1,2}|\|\s*tee(?:\s+-a)?\s)\s*(?:/tmp/|/dev/|\S+\.(?:log|out|txt)\b)")


def leaves_code(args: Any) -> bool:
    """The edit leaves the code under work as it was: it writes a whole file of the agent's own
    (a tool's whole new content, an editor's ``create``, ``cat > file``, SWE-agent's
    ``create``: a reproduction script or a test), or works on the workspace (a checkout, a
    clone, ``rm``, ``mkdir``, output kept in a log or under ``/tmp``)."""
    if not isinstance(args, dict):
        return False
    if args.get("command") == "create" or (_has_text(args, _CONTENT_KEYS) and not any(k in args for k in _OLD_TEXT_KEYS)):
        return True
    command = command_of(args)
    if command is None or _program_edits(args, command):
        return False
    parts = _command_parts(command.strip().partition("\n")[0])
    return bool(parts) and all(p.startswith("cd ") or _SHELL_CREATE.match(p) or _SHELL_WORKSPACE.match(p)
                               or (_SCRATCH_TARGET.search(p) and not _SHELL_EDIT.search(_SCRATCH_TARGET.sub("", p)))
                               or not _SHELL_EDIT.search(p) for p in parts)


# Waiting on a process that is already running: Agent-Zero's terminal polled with `runtime: output`
# (its prompt teaches it for long-running programs), OpenHands' empty command (its terminal says
# "wait longer … by sending empty command ''"), Claude Code's `BashOutput`. The same poll with the
# same answer is the process still at work, not a call repeated.
_POLL_TOOL = lazy_pattern(r"(?:^|[._-])bash_?output$", re.IGNORECASE)
# What the terminal says when it hands back control while the process runs on: no result of the poll.
_STILL_RUNNING = lazy_pattern(r"\[(?:SYSTEM: Returning control to agent after|The command has no new output after) \d+ seconds\b[^\]]*\]")


def waits_on_process(tool: str, args: Any) -> bool:
    """The call waits for the output of a process already running (a poll)."""
    if _POLL_TOOL.search(tool):
        return True
    if not isinstance(args, dict):
        return False
    runtime = args.get("runtime")
    if isinstance(runtime, str) and runtime.strip().lower() == "output":
        return True
    command = args.get("command")
    return isinstance(command, str) and not command.strip() and not _has_text(args, _PATH_KEYS)


_SLEEP = r"sleep\s+\d+(?:\.\d+)?[smh]?"
_SLEEP_THEN = lazy_pattern(_SLEEP + r"\s*(?:&&|;)\s*(.+)", re.DOTALL)
_SLEEP_ONLY = lazy_pattern(_SLEEP)


def only_sleeps(args: Any) -> bool:
    """The call only sleeps (`sleep 5`): a wait, as Agent-Zero's `wait` tool is, for whatever runs
    in the background; unlike a poll it shows nothing of it, so its turn is no turn of progress."""
    command = command_of(args)
    return command is not None and _SLEEP_ONLY.fullmatch(_without_cd(command).strip()) is not None


def waits_first(command: str | None) -> bool:
    """A command that waits before it does anything (`sleep 5 && curl localhost:8000`)."""
    return _SLEEP_THEN.fullmatch(_without_cd(command or "").strip()) is not None


def waits_then_looks(command: str | None) -> bool:
    """A command that waits, then looks (`sleep 60 && tail -5 build.log`): checking on a
    process in the background, whose unchanged answer is the process's time, not the agent's."""
    waited = _SLEEP_THEN.fullmatch(_without_cd(command or "").strip())
    return waited is not None and _SHELL_INSPECT.match(waited.group(1)) is not None and not _SHELL_EDIT.search(waited.group(1))


# Whether a process is still there (`ps -p 6149`, `pgrep -f train.py`, `kill -0 "$PID"`, `ps aux | grep
# build`): its answer is the process's, and changes on its time, not on the agent's.
_PROCESS_CHECK = lazy_pattern(r"(?:^|[;&|(]\s*)(?:ps\s+(?:-p\b|-ef\b|aux\b)|pgrep\s|pidof\s|kill\s+-0\s)")


def checks_a_process(command: str | None) -> bool:
    """A command that checks whether a process is still running."""
    return bool(command) and _PROCESS_CHECK.search(_without_cd(command).strip()) is not None


def without_running_notice(text: str | None) -> str:
    """A poll's output without the terminal's note that the process is still running."""
    return _STILL_RUNNING.sub("", text or "").strip()


# Saying something rather than looking at anything: a farewell or status `echo` is no progress,
# and nor is waiting (`sleep 30 && echo done`).
_SHELL_PRINT = r"^(?:(?:echo|printf)\b[^|<>;&$`]*|#.*)$"  # a comment alone runs nothing: it only says
_SHELL_SAY = lazy_pattern(_SHELL_PRINT + r"|^(?:pwd|whoami|id|date|true|:)\s*$|^sleep \d+(?:\.\d+)?[smhd]?\s*$")
_PRINTS = lazy_pattern(_SHELL_PRINT)


# A tool for thinking aloud or keeping a to-do list (OpenHands' and Anthropic's `think`, the MCP server
# `sequential-thinking.sequentialthinking`, Claude Code's `TodoWrite`): it records the agent's own words.
_THINK_TOOL = lazy_pattern(r"(?:^|[._-])(?:think|thinking|sequential_?thinking|todo_?write)$", re.IGNORECASE)


def _all_parts(args: Any, pattern: re.Pattern[str]) -> bool:
    """Every part of the call's shell command (`a && b; c`, one per line) matches ``pattern``."""
    command = command_of(args)
    parts = [part.strip() for part in re.split(r"\s*(?:&&|;|\n)\s*", _without_cd(command))] if command else []
    return any(parts) and all(pattern.match(part) for part in parts if part)


def says_only(args: Any, tool: str = "") -> bool:
    """The call only prints text the agent wrote itself (``echo "Done"``, a thinking tool) or
    waits (``sleep 30``): it looks at nothing."""
    return _THINK_TOOL.search(tool) is not None or _all_parts(args, _SHELL_SAY)


def prints_only(args: Any) -> bool:
    """The shell command only prints text the agent wrote (``echo "I could not fix it. Goodbye."``):
    a reply sent as a command, which does nothing (thinking tools and waits are not replies)."""
    return _all_parts(args, _PRINTS)


#: A command as steering quotes it.
COMMAND_CHARS = 80


def _tail(path: str) -> str:
    """A long path by its last two parts: ``…/cli/command_parser.pony``."""
    parts = path.rstrip("/").split("/")
    return "…/" + "/".join(parts[-2:]) if len(parts) > 3 else path


#: The arguments naming what a file tool works on, quoted after its name when it runs no command.
_NAMING_KEYS = ("command", "pattern", "query") + _PATH_KEYS


_LINE_NUMBER = lazy_pattern(r"\s*-?\d{1,9}\s*$")
# SWE-agent 1.x hands the editor its command line's words: a view range as text, "[698, 723]"
_RANGE_TEXT = lazy_pattern(r"\s*\[?\s*(-?\d{1,9})\s*[,\s]\s*(-?\d{1,9})\s*\]?\s*$")


def _line_number(value: Any) -> int | None:
    """A line number as a model sent it: a whole number, or its digits in a string."""
    if isinstance(value, str) and _LINE_NUMBER.match(value):
        value = int(value)
    return value if is_int(value) and -1 <= value < 10**9 else None


def _line_range(args: dict) -> str:
    """The lines a file tool reads, when the call says (``lines 698-723``): reads of one file at
    two places are two calls, and steering names them apart. The editors' ``view_range``
    (OpenHands, SWE-agent; -1: to the end), Agent-Zero's ``line_from``/``line_to``, Claude
    Code's ``offset`` (the first line) and ``limit`` (how many)."""
    view, count = args.get("view_range"), None
    if isinstance(view, str) and (text := _RANGE_TEXT.match(view)):
        view = text.groups()
    if isinstance(view, (list, tuple)) and len(view) == 2:
        first, last = _line_number(view[0]), _line_number(view[1])
    elif "offset" in args or "limit" in args:
        first, last, count = _line_number(args.get("offset")), None, _line_number(args.get("limit"))
    else:
        first, last = _line_number(args.get("line_from")), _line_number(args.get("line_to"))
    if count is not None and count <= 0:
        count = None
    if first is None and last is None and count is None:
        return ""
    start = first if first is not None and first > 0 else 1
    if count is not None:
        last = start + count - 1
    return f"lines {start}-{last if last is not None and last > 0 else 'end'}"


def short_command(args: Any, tool: str | None = None) -> str | None:
    """The command a call ran, on one line and cut short, for steering to name it. A file
    tool's call, which runs none, is named by the tool and what it works on, with the lines
    it reads (``str_replace_editor view /repo/a.py lines 10-40``, ``Read /repo/a.py``)."""
    command = command_of(args)
    if (not command or not command.strip()) and tool and isinstance(args, dict) and _has_text(args, _PATH_KEYS + ("pattern", "query")):
        named = [(k, " ".join(args[k].split())) for k in _NAMING_KEYS if isinstance(args.get(k), str) and args[k].strip()]
        lines = _line_range(args)
        named += [("lines", lines)] if lines else []
        # the file's name says more than the folders above it, and with its lines it says enough
        if lines or len(" ".join([tool, *(v for _, v in named)])) > COMMAND_CHARS:
            named = [(k, _tail(v) if k in _PATH_KEYS else v) for k, v in named]
        command = " ".join([tool, *(v for _, v in named)])
    if not command or not command.strip():
        return None
    line = " ".join(command.split())
    return line if len(line) <= COMMAND_CHARS else line[:COMMAND_CHARS - 1] + "…"
