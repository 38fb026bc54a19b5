"""What a tool's output says: failures, failing tests, findings and the identity of an error.

Outputs are written the way the tools print them; a failure is an action that could not do
its job, not output that reports problems (docs/supervisor.md, "Outcomes").
"""

from __future__ import annotations

import pytest

from org.kernel.classify import action_kind, carries_program, classify_output, classify_report, error_signature, run_text, runs_what_it_writes, short_command

PYTEST_PASS = """============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.1.1, pluggy-1.4.0
rootdir: /repo
plugins: timeout-2.3.1, anyio-4.3.0, xdist-3.5.0
collected 12 items

tests/test_app.py ............                                           [100%]

============================== 12 passed in 0.41s ==============================
"""
PYTEST_FAIL = """============================= test session starts ==============================
plugins: timeout-2.3.1
collected 3 items

tests/test_app.py .F.                                                    [100%]

=================================== FAILURES ===================================
________________________________ test_total ____________________________________

    def test_total():
>       assert total([1, 2]) == 4
E       assert 3 == 4

tests/test_app.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_app.py::test_total - assert 3 == 4
========================= 1 failed, 2 passed in 0.12s ==========================
"""
UNITTEST_FAIL = """..F
======================================================================
FAIL: test_slug (tests.test_text.SlugTests)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/repo/tests/test_text.py", line 9, in test_slug
    self.assertEqual(slug("A B"), "a-b")
AssertionError: 'a b' != 'a-b'

----------------------------------------------------------------------
Ran 3 tests in 0.004s

FAILED (failures=1)
"""
TRACEBACK = """Traceback (most recent call last):
  File "/repo/app.py", line 3, in <module>
    main()
  File "/repo/app.py", line 2, in main
    return undefined_name + 1
NameError: name 'undefined_name' is not defined
"""
SYNTAX = """  File "/repo/app.py", line 4
    print("x"
         ^
SyntaxError: '(' was never closed
"""


@pytest.mark.parametrize("output, failed, error_type", [
    pytest.param(PYTEST_PASS, False, None, id="pytest passing, with the timeout plugin listed"),
    pytest.param(PYTEST_FAIL, False, "test", id="pytest failing tests: the run worked"),
    pytest.param(UNITTEST_FAIL, False, "test", id="unittest failing tests"),
    pytest.param("Ran 4 tests in 0.010s\n\nOK\n", False, None, id="unittest passing"),
    pytest.param(TRACEBACK, True, "execution", id="python traceback"),
    pytest.param(TRACEBACK.replace("NameError: name 'undefined_name' is not defined", "ModuleNotFoundError: No module named 'flask'"),
                 True, "dependency", id="missing module"),
    pytest.param(SYNTAX, True, "syntax", id="syntax error without a traceback header"),
    pytest.param("PermissionError: [Errno 13] Permission denied: '/etc/shadow'", True, "permission", id="os error line"),
    pytest.param("", False, None, id="grep that found nothing"),
    pytest.param("src/app.py:12:80: E501 line too long (91 > 79 characters)\nsrc/app.py:30:1: F401 'os' imported but unused\n",
                 False, None, id="flake8 findings"),
    pytest.param("src/app.py:3: error: Incompatible return value type (got \"int\", expected \"str\")  [return-value]\n"
                 "Found 1 error in 1 file (checked 4 source files)\n", False, None, id="mypy findings"),
    pytest.param("************* Module app\napp.py:1:0: C0114: Missing module docstring (missing-module-docstring)\n\n"
                 "Your code has been rated at 9.50/10\n", False, None, id="pylint findings"),
    pytest.param("main.c: In function 'main':\nmain.c:5:5: error: 'x' undeclared (first use in this function)\n", True, "execution",
                 id="compiler error"),
    pytest.param("Foo.java:3: error: cannot find symbol\n        Bar b = new Bar();\n        ^\n1 error\n", True, "execution", id="javac"),
    pytest.param("ERROR: Could not find a version that satisfies the requirement flaskk (from versions: none)\n"
                 "ERROR: No matching distribution found for flaskk\n", True, "dependency", id="pip"),
    pytest.param("Reading package lists... Done\nE: Unable to locate package libfoo-dev\n", True, "dependency", id="apt"),
    pytest.param("/bin/bash: line 1: javac: command not found\n", True, "not_found", id="command not found"),
    pytest.param("/bin/sh: 1: curl: not found\n", True, "not_found", id="dash: command not found"),
    pytest.param("Command timed out. Sent SIGINT to the process: Serving on :8000\nPlease run in background if you want to continue.\n"
                 "[Command finished with exit code 130]", True, "timeout", id="openhands timeout"),
    pytest.param("/bin/sh: 1: cd: can't cd to /w/build\nmake: *** [Makefile:192: build] Error 2\n", True, "not_found", id="dash: cd"),
    pytest.param("cc -c a.c\nmake[1]: *** [Makefile:4: a.o] Error 1\n", True, "execution", id="make recipe failed"),
    pytest.param("[INFO] Building core\n[ERROR] src/main/java/a/JSON.java:[1284] (regexp) RegexpMultiline: Line contains carriage return\n"
                 "[INFO] BUILD FAILURE\n[ERROR] \n[ERROR] For more information about the errors, read:\n", True, "execution", id="maven"),
    pytest.param("cat: /srv/app/config.yml: No such file or directory\n", True, "not_found", id="missing file"),
    pytest.param("bash: -c: line 2: syntax error: unexpected end of file\n", True, "syntax", id="shell syntax"),
    pytest.param("fatal: not a git repository (or any of the parent directories): .git\n", True, "not_found", id="git outside a repo"),
    pytest.param("curl: (7) Failed to connect to localhost port 8000: Connection refused\n", True, "network", id="connection refused"),
    pytest.param("curl: (7) Failed to connect to localhost port 8000 after 0 ms: Couldn't connect to server\n", True, "network",
                 id="curl 7.8x cannot connect"),
    pytest.param("curl: (22) The requested URL returned error: 500\n", True, "execution", id="curl -f on a server error"),
    pytest.param("curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received\n", True, "timeout", id="curl timed out"),
    pytest.param("wget: unable to resolve host address 'pypi.internal'\n", True, "network", id="wget cannot resolve"),
    pytest.param("docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
                 True, "network", id="docker without its daemon"),
    pytest.param("ERROR 2002 (HY000): Can't connect to local MySQL server through socket '/run/mysqld/mysqld.sock' (2)\n",
                 True, "network", id="mysql client without its server"),
    pytest.param("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found\n", True,
                 "dependency", id="npm 10 unknown package"),
    pytest.param("usage: pip <command> [options]\npip: error: unknown command \"instal\"\n", True, "execution",
                 id="a program's own error (argparse)"),
    pytest.param('Exception in thread "main" java.lang.NullPointerException\n\tat Main.main(Main.java:5)\n', True, "execution",
                 id="java uncaught exception"),
    pytest.param("Segmentation fault (core dumped)\n", True, "execution", id="segmentation fault"),
    pytest.param("bash: line 1:  4321 Segmentation fault      (core dumped) ./a.out\n", True, "execution",
                 id="segmentation fault, as bash reports a command's"),
    pytest.param("/app/a.js:1\nconsole.log(x)\n            ^\n\nReferenceError: x is not defined\n"
                 "    at Object.<anonymous> (/app/a.js:1:13)\n    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n\n"
                 "Node.js v18.19.0\n", True, "execution", id="node uncaught error with its stack"),
    pytest.param("panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n"
                 "\t/app/main.go:8 +0x1d\nexit status 2\n", True, "execution", id="go panic"),
    pytest.param("thread 'main' panicked at src/main.rs:4:5:\nattempt to subtract with overflow\n", True, "execution", id="rust panic"),
    pytest.param("a.rb:1:in `<main>': undefined local variable or method `x' for main:Object (NameError)\n", True, "execution",
                 id="ruby error"),
    pytest.param('jq: error (at <stdin>:1): Cannot index string with "a"\n', True, "execution", id="jq"),
    pytest.param('sh: 1: Syntax error: "(" unexpected\n', True, "syntax", id="dash syntax error"),
    pytest.param("git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n", True, "permission",
                 id="ssh refused"),
    pytest.param("## Errors\nTypeError: bad input is returned\n    at most 3 times, then the call fails.\n", False, None,
                 id="documentation quoting an error"),
    pytest.param("    log.error(\"Could not connect to %s\", host)\n# Segmentation fault handling\nnpm warn deprecated glob@7.2.3\n"
                 "go: downloading github.com/pkg/errors v0.9.1\n", False, None, id="source and notices naming those failures"),
    pytest.param("[SYSTEM: Returning control to agent after 180 seconds of execution. Process might be still running.]", True,
                 "timeout", id="Agent-Zero terminal timeout"),
    pytest.param("Starting development server\n[The command has no new output after 30 seconds. You may wait longer to see additional "
                 "output by sending empty command '', send other commands to interact with the current process, or send keys "
                 "to interrupt/kill the command.]", True, "timeout", id="OpenHands terminal without new output"),
    pytest.param("Successfully installed flask-3.0.2 werkzeug-3.0.1\n", False, None, id="pip install"),
    pytest.param("def handle_error(error):\n    raise ValueError('bad input')\n", False, None, id="source code mentioning errors"),
    pytest.param("[File: /repo/requests/sessions.py (674 lines total)]\n(414 more lines above)\n"
                 "415:        :type timeout: float or tuple\n416:        :param allow_redirects: (optional)\n", False, None,
                 id="a file shown in a window: its lines are content"),
    pytest.param("    142\t    errno.EADDRINUSE: 'That port is already in use.',\n"
                 "    143\t    errno.EACCES: \"You don't have permission to access that port.\",\n", False, None,
                 id="cat -n of a file"),
    pytest.param("    12→        # Connection refused is retried below\n    13→        retry()\n", False, None,
                 id="a file read with its line numbers"),
    pytest.param("  retries: 3\n  timeout: 30\n", False, None, id="a setting named timeout"),
    pytest.param("/a0/usr/workdir/net.py 40 lines\n>>>\n 1 import socket\n 2 # retry when Connection refused\n"
                 " 3 raise PermissionError('x: Permission denied')\n<<<", False, None, id="Agent-Zero's text_editor shows a file"),
    pytest.param("error reading /a0/usr/workdir/x.py: file not found", True, "not_found", id="Agent-Zero's text_editor: no such file"),
    pytest.param("File gson/src/main/java/Foo.java not found", True, "not_found", id="SWE-agent's open: no such file"),
    pytest.param("Directory src/foo not found", True, "not_found", id="SWE-agent's search_dir: no such folder"),
    pytest.param("error patching /a0/usr/workdir/x.py: file changed since last read - re-read to get current line numbers", True,
                 "execution", id="Agent-Zero's text_editor refuses a patch"),
    pytest.param("12:01:33 worker: Connection refused\n", True, "network", id="a log line opening with a clock time"),
    pytest.param("curl: (28) Operation timed out after 3001 milliseconds with 0 bytes received\n", True, "timeout",
                 id="curl timeout"),
    pytest.param("Testing...\nAll edge cases passed!\n", False, None, id="script output"),
    pytest.param("MSBuild version 17.3.4+a400405ba for .NET\nMSBUILD : error MSB1006: Property is not valid.\nSwitch: ReferencePath=a;b\n",
                 True, "execution", id="MSBuild refusing a switch, under its banner"),
])
def test_outputs_of_each_kind(output, failed, error_type):
    verdict = classify_output(output)
    assert (verdict.failed, verdict.error_type) == (failed, error_type)


def test_the_error_line_names_the_error():
    assert classify_output(TRACEBACK).error_line == "NameError: name 'undefined_name' is not defined"
    assert classify_output(PYTEST_FAIL).error_line == "FAILED tests/test_app.py::test_total - assert 3 == 4"


def test_a_traceback_is_named_by_its_exception_whatever_the_exception_is_called():
    """Python prints the exception after the last frame; Django's names end in no "Error"."""
    def raised(line: str) -> str:
        return ('Traceback (most recent call last):\n  File "/testbed/repro.py", line 4, in <module>\n    django.setup()\n'
                '  File "/testbed/django/__init__.py", line 19, in setup\n    configure_logging(settings.LOGGING)\n' + line + "\n")
    configured = classify_output(raised("django.core.exceptions.ImproperlyConfigured: Requested setting LOGGING, but settings are not configured."))
    assert (configured.failed, configured.error_type) == (True, "execution")
    assert configured.error_line.startswith("django.core.exceptions.ImproperlyConfigured: Requested setting LOGGING")
    assert classify_output(raised("StopIteration")).error_line == "StopIteration"
    assert classify_output(raised("ValueError: bad value")).error_line == "ValueError: bad value"


def test_an_error_label_with_nothing_after_it_names_no_error():
    """A script printing what it captured: "Error:" over an empty stderr is a label, not a failure."""
    captured = "Exit code: 0\r\nOutput: Running with __name__: __main__\r\n\r\nError: \r\n\r\nExit code: 0\r\nOutput: done\r\n\r\nError:"
    assert classify_output(captured).failed is False
    assert classify_output("error: \nERROR:   \n").failed is False
    assert classify_output("Output: x\nError: cannot open x").error_line == "Error: cannot open x"


def test_an_error_keeps_its_identity_when_volatile_parts_change():
    first = classify_output("/bin/bash: line 41174: DISCUSSION: command not found").error_line
    again = classify_output("/bin/bash: line 41190: DISCUSSION: command not found").error_line
    other = classify_output("/bin/bash: line 41190: make: command not found").error_line
    assert error_signature(first) == error_signature(again) != error_signature(other)
    assert error_signature("object at 0x7f3a9c2b1d30 failed in /tmp/tmpab12cd/x.py") == \
        error_signature("object at 0x7f00aa11bb22 failed in /tmp/tmpzz99yy/x.py")


def test_a_stack_frame_s_line_number_is_volatile_the_error_and_its_place_are_not():
    def python(line: int, error: str = "KeyError: 'user'") -> str:
        return f'Traceback (most recent call last):\n  File "/repo/app.py", line {line}, in main\n    load()\n{error}\n'
    assert run_text(python(31)) == run_text(python(47)) != run_text(python(31, "KeyError: 'token'"))
    assert run_text("\tat com.acme.App.main(App.java:12)\n") == run_text("\tat com.acme.App.main(App.java:40)\n")
    assert run_text("    at load (/repo/app.js:3:17)\n") == run_text("    at load (/repo/app.js:9:2)\n")
    # a syntax error's line says where the code is wrong, and a line printed by the program is its output
    assert run_text('  File "/repo/app.py", line 3\n') != run_text('  File "/repo/app.py", line 4\n')
    assert run_text("row 31 of 40\n") != run_text("row 32 of 40\n")
    # node's process id before each of its warnings (RepoLaunch, undici: the same failing run 5 times)
    assert run_text("(node:33128) ExperimentalWarning: SQLite is experimental") == run_text("(node:33166) ExperimentalWarning: SQLite is experimental")


def test_a_unittest_failure_is_named_by_its_test_and_error_not_by_its_summary():
    output = ("E\n" + "=" * 70 + "\nERROR: setUpClass (__main__.PoolTests)\n" + "-" * 70 + "\n"
              'Traceback (most recent call last):\n  File "/repo/reproduce.py", line 31, in setUpClass\n    editor()\n'
              "django.db.utils.NotSupportedError: SQLite schema editor cannot be used\n\n" + "-" * 70 +
              "\nRan 0 tests in 0.001s\n\nFAILED (errors=1)\n")
    verdict = classify_output(output)
    assert verdict.error_type == "test"
    assert verdict.error_line == ("ERROR: setUpClass (__main__.PoolTests): django.db.utils.NotSupportedError: "
                                  "SQLite schema editor cannot be used")


def test_two_errors_of_one_class_are_not_confused():
    a = classify_output("Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'user'")
    b = classify_output("Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'token'")
    assert a.error_type == b.error_type == "execution"
    assert error_signature(a.error_line) != error_signature(b.error_line)


@pytest.mark.parametrize("tool, args, kind", [
    ("code_execution_tool", {"runtime": "terminal", "code": "cat src/app.py"}, "inspect"),
    ("code_execution_tool", {"runtime": "terminal", "code": "cd /repo && grep -rn 'slug' src"}, "inspect"),
    ("code_execution_tool", {"runtime": "terminal", "code": "git diff"}, "inspect"),
    ("code_execution_tool", {"runtime": "terminal", "code": "sed -i 's/a/b/' src/app.py"}, "edit"),
    ("code_execution_tool", {"runtime": "terminal", "code": "cat > src/app.py << 'EOF'\nprint(1)\nEOF"}, "edit"),
    ("code_execution_tool", {"runtime": "terminal", "code": "echo 'x = 1' >> src/app.py"}, "edit"),
    ("code_execution_tool", {"runtime": "terminal", "code": "python -m pytest -q"}, "run"),
    ("code_execution_tool", {"runtime": "python", "code": "print(2 + 2)"}, "run"),
    ("code_execution_tool", {"runtime": "terminal", "code": "python app.py 2>&1 | tail -5"}, "run"),
    ("text_editor", {"op": "read", "path": "src/app.py"}, "inspect"),
    ("text_editor", {"op": "patch", "path": "src/app.py"}, "edit"),
    # Agent-Zero v1.x's own text_editor: `text_editor:read`, `:write`, `:patch` reach the hooks as `text_editor`
    ("text_editor", {"path": "/a0/usr/workdir/app.py", "line_from": 1, "line_to": 50}, "inspect"),
    ("text_editor", {"path": "/a0/usr/workdir/app.py"}, "inspect"),
    ("text_editor", {"path": "/a0/usr/workdir/app.py", "content": "print(1)\n"}, "edit"),
    ("text_editor", {"path": "/a0/usr/workdir/app.py", "edits": [{"from": 2, "to": 2, "content": "x = 2\n"}]}, "edit"),
    ("str_replace_editor", {"command": "view", "path": "src/app.py"}, "inspect"),
    ("str_replace_editor", {"command": "str_replace", "path": "src/app.py", "old_str": "a", "new_str": "b"}, "edit"),
    ("search_engine", {"query": "pytest timeout"}, "inspect"),
    # SWE-agent 1.x sends its editor as a command line
    ("code_execution_tool", {"code": "str_replace_editor view /testbed/a.py --view_range 1 20"}, "inspect"),
    ("code_execution_tool", {"code": "str_replace_editor str_replace /testbed/a.py --old_str 'x > 1' --new_str 'x >= 1'"}, "edit"),
    ("code_execution_tool", {"code": "str_replace_editor create /testbed/reproduce.py --file_text 'print(1)'"}, "edit"),
    # a program that rewrites a file is an edit, also handed whole to a shell (mini-swe-agent runs of GPT-5 nano)
    ("bash", {"command": "python - << 'PY'\np = 'a.py'\ns = open(p).read()\nopen(p, 'w').write(s.replace('x', 'y'))\nPY"}, "edit"),
    ("bash", {"command": "bash -lc 'python - << \"PY\"\np = \"a.py\"\ns = open(p).read()\nopen(p, \"w\").write(s)\nPY'"}, "edit"),
    ("bash", {"command": "bash -lc 'cd /repo && grep -rn slug src'"}, "inspect"),
    ("bash", {"command": "bash -lc 'python -m pytest -q' && echo done"}, "run"),
    # a `|` escaped in a search pattern is no pipe into `patch` (OpenHands GLM-4.6, django-13315)
    ("execute_bash", {"command": 'find tests -name "*.py" | xargs grep -l "regression.*patch\\|patch.*regression" | head -5'}, "inspect"),
    ("execute_bash", {"command": "git diff | patch -p1 -R"}, "edit"),
    # `env` alone lists the environment; with a program after it, it runs that program (RepoLaunch, a QGIS build)
    ("bash", {"command": "env | grep PATH"}, "inspect"),
    ("bash", {"command": "env -u LD_LIBRARY_PATH cmake --build build --parallel 1"}, "run"),
    ("bash", {"command": "env CI=1 npm test"}, "run"),
])
def test_action_kinds(tool, args, kind):
    assert action_kind(tool, args) == kind


def test_a_command_is_quoted_on_one_line_and_short():
    assert short_command({"code": "cd /repo &&\n   python   -m pytest"}) == "cd /repo && python -m pytest"
    assert len(short_command({"code": "x" * 500})) == 80
    assert short_command({"path": "/x"}) is None


def test_a_file_tool_s_call_runs_no_command_and_is_named_by_the_tool_and_its_file():
    """An editor's ``command`` (OpenHands', SWE-agent's ``str_replace_editor``) says what it does
    to the file: it is not a command run, and its edits change the code under work."""
    from org.kernel.classify import command_of, leaves_code
    replace = {"command": "str_replace", "path": "/workspace/ponyc/packages/cli/command_parser.pony", "old_str": "a", "new_str": "b"}
    assert command_of(replace) is None and command_of({"command": "ls -la", "path": "/x"}) == "ls -la"
    assert not leaves_code(replace) and leaves_code({"command": "create", "path": "/w/repro.py", "file_text": "x"})
    assert short_command({"command": "view", "path": "/repo/a.py"}, "str_replace_editor") == "str_replace_editor view /repo/a.py"
    assert short_command(replace, "str_replace_editor") == "str_replace_editor str_replace /workspace/ponyc/packages/cli/command_parser.pony"
    long = dict(replace, path="/workspace/ponylang__ponyc__0.1/packages/cli/command_parser.pony")
    assert short_command(long, "str_replace_editor") == "str_replace_editor str_replace …/cli/command_parser.pony"
    assert short_command({"file_path": "/repo/a.py", "old_string": "a", "new_string": "b"}, "Edit") == "Edit /repo/a.py"
    assert short_command({"pattern": "def foo", "path": "/repo"}, "Grep") == "Grep def foo /repo"
    assert short_command({"code": "ls"}, "code_execution_tool") == "ls"


def test_a_file_tool_s_read_is_named_with_the_lines_it_reads():
    """Reads of one file at two places are two calls: steering names them apart, in each
    scaffold's way of saying which lines."""
    view = {"command": "view", "path": "/testbed/lib/matplotlib/cm.py"}
    # with its lines, a file is named by its last two parts: short enough for steering to quote whole
    assert short_command({**view, "view_range": [698, 723]}, "str_replace_editor") == "str_replace_editor view …/matplotlib/cm.py lines 698-723"
    assert short_command({**view, "view_range": [698, -1]}, "str_replace_editor").endswith("cm.py lines 698-end")
    assert short_command({**view, "view_range": "[373, 402]"}, "str_replace_editor").endswith("cm.py lines 373-402")  # SWE-agent 1.x
    assert short_command({"path": "/app/x.py", "line_from": 1, "line_to": 50}, "text_editor") == "text_editor /app/x.py lines 1-50"
    assert short_command({"path": "/app/x.py", "line_from": "1", "line_to": "50"}, "text_editor") == "text_editor /app/x.py lines 1-50"
    assert short_command({"path": "/app/x.py", "line_from": 40}, "text_editor") == "text_editor /app/x.py lines 40-end"
    assert short_command({"file_path": "/repo/a.py", "offset": 100, "limit": 50}, "Read") == "Read /repo/a.py lines 100-149"
    assert short_command({"file_path": "/repo/a.py", "limit": 50}, "Read") == "Read /repo/a.py lines 1-50"
    long = {**view, "path": "/workspace/ponylang__ponyc__0.1/packages/cli/command_parser.pony", "view_range": [1, 80]}
    assert short_command(long, "str_replace_editor") == "str_replace_editor view …/cli/command_parser.pony lines 1-80"
    # no range, or none that is a line number: the file alone
    for odd in ({}, {"view_range": "1-5"}, {"view_range": [True, 3.5]}, {"offset": 10**400}, {"line_from": -7}):
        assert short_command({**view, **odd}, "str_replace_editor") == "str_replace_editor view /testbed/lib/matplotlib/cm.py", odd


@pytest.mark.parametrize("output, failed", [
    pytest.param("ModuleNotFoundError: No module named 'cv2' - Stack Overflow\nhttps://stackoverflow.com/q/1\nTry pip install opencv-python",
                 False, id="a search result titled with the error"),
    pytest.param("Traceback (most recent call last):\n  File \"main.py\", line 1\nModuleNotFoundError: No module named 'cv2'\nAnswer: ...",
                 False, id="a page quoting a traceback"),
    pytest.param("I could not finish: the tests fail with\nAssertionError: 3 != 4", False, id="a subordinate's account"),
    pytest.param("Search Engine search failed: ConnectError('All connection attempts failed')", True, id="the search failed"),
    pytest.param("Error processing document: 404 Not Found", True, id="the document could not be read"),
    pytest.param("Remote agent failed to create task.", True, id="the remote agent failed"),
    pytest.param("ConnectionError: Name or service not known", True, id="the tool's own error"),
    pytest.param("Done: all 12 tests pass, none failed.", False, id="a subordinate's one-line report of success"),
    pytest.param("", False, id="nothing found"),
])
def test_a_reporting_tool_fails_only_when_it_says_so_itself(output, failed):
    assert classify_report(output).failed is failed


@pytest.mark.parametrize(("args", "carries"), [
    ({"runtime": "python", "code": "import json\nprint(json.load(open('a.json')))"}, True),
    ({"runtime": "terminal", "code": "cd /repo && python3 << 'EOF'\nimport json\nEOF"}, True),
    ({"runtime": "terminal", "code": "python -c \"import sys; print(sys.path)\""}, True),
    ({"runtime": "terminal", "code": "python scrape.py"}, False),
    # handed whole to a shell: the wrapper's closing quote comes after a long program
    ({"command": "bash -lc 'python - << \"PY\"\n" + "print(1)\n" * 100 + "PY'"}, True),
    ({"runtime": "terminal", "code": "sed -i 's/a/b/' app.py && python app.py"}, False),
    ({"path": "/repo/app.py"}, False),
])
def test_a_call_carries_its_program_when_its_code_is_what_runs(args, carries):
    assert carries_program(args) is carries


@pytest.mark.parametrize(("command", "ran"), [
    # mini-swe-agent with DeepSeek V4 Flash, astropy-14182: a probe written and run in one call
    ("cd /testbed && cat > /tmp/t.py << 'EOF'\nprint(1)\nEOF\npython /tmp/t.py", True),
    ("cat <<EOF > t.py\nprint(1)\nEOF\npython t.py 2>&1 && rm t.py", True),
    ("cat > t.py << 'EOF'\nprint(1)\nEOF", False),
    ("cat > t.py << 'EOF'\nprint(1)\nEOF\ncat t.py", False),  # looked at, not run
    ("cat > t.py << 'EOF'\npython t.py\nEOF", False),  # the run is the file's text
    ("cat > src/app.py << 'EOF'\nprint(1)\nEOF\npython -m pytest -q", False),  # something else run
    ("sed -i 's/a/b/' t.py && python t.py", False),
])
def test_a_script_written_from_a_heredoc_and_run_in_the_same_call_ran(command, ran):
    assert runs_what_it_writes({"command": command}) is ran


def test_a_module_s_lower_case_exception_after_a_traceback_is_the_failure_not_the_traceback_s_header():
    """`re.error`, `socket.gaierror`: named with their module, in lower case (mini-swe-agent with
    DeepSeek V4 Flash, matplotlib-21568: PACE quoted "Traceback (most recent call last)")."""
    frames = '  File "/testbed/lib/text.py", line 9, in wrap\n    re.compile(pattern)\n'
    for last in ("re.error: bad escape \\m at position 0", "socket.gaierror: [Errno -2] Name or service not known"):
        verdict = classify_output(f"Traceback (most recent call last):\n{frames}{last}\n")
        assert (verdict.failed, verdict.error_line) == (True, last)
    # a bare lower-case word after the frames is not an exception's name
    assert classify_output(f"Traceback (most recent call last):\n{frames}error: bad\n").error_line != "error: bad"


def repolaunch(output: str, status: int) -> str:
    """RepoLaunch's terminal: the command echoed first (its TTY doubles a letter now and then),
    then what it printed, the prompt and the exit status."""
    return f"{output}\n\nroot@5a6c35c18ad:/testbed $\n\nexit code: {status}"


def test_an_output_that_closes_with_its_exit_status_is_decided_by_it():
    """A warning inside a configure that worked (`git describe` in every cmake run, a `cat` of a
    missing licence) is no failure when the output says the command exited 0; the same text
    with another status is one."""
    configure = ("cmake -S . -B build\nfatal: No names found, cannot describe anything.\n"
                 "cat: /testbed/contrib/natvis/LICENSE: No such file or directory\n-- Configuring done\n-- Build files have been written to: /testbed/build")
    assert classify_output(repolaunch(configure, 0)).failed is False
    verdict = classify_output(repolaunch(configure, 1))
    assert verdict.failed and verdict.error_line == "cat: /testbed/contrib/natvis/LICENSE: No such file or directory"
    # a program that prints the words inside its output does not set the status
    assert classify_output("exit code: 0\nTraceback (most recent call last):\n  File \"a.py\", line 1\nValueError: bad\n").failed


def test_repolaunch_s_time_limit_is_a_timeout():
    out = repolaunch("cmake --build build\n[697/1728] Building CXX object lib/LoopFuse.cpp.o^C\nninja: build stopped: interrupted by user.\n\n"
                     "**Exited due to timeout**", 124)
    assert classify_output(out).error_type == "timeout"
    assert classify_output(out).error_line == "**Exited due to timeout**"


def test_the_line_quoted_for_a_failure_nothing_names_is_not_the_command_echoed():
    from org.kernel.classify import telling_line

    command = "dotnet test src/Uno.slnf -c Release --logger \"console;verbosity=detailed\""
    out = repolaunch("dotnet test src/Uno.slnf -c Release --loggeer \"console;verbosity=detailed\"\n"
                     "\x1b=Specify a project or solution file. The current working directory does not contain one.", 1)
    assert telling_line(out, None, command) == "Specify a project or solution file. The current working directory does not contain one."
    # without the command, or for another command, the first line is what the output says first
    assert telling_line(out).startswith("dotnet test src/Uno.slnf")
    assert telling_line("make all\nmake: *** [all] Error 2", None, "ls").startswith("make all")
    # an output with nothing but the echo and the prompt has no line to quote
    assert telling_line(repolaunch("dotnet test --loggeer x\n\x1b=", 1), None, "dotnet test --logger x") is None
    # a command of several lines, echoed line by line
    heredoc = "cat > a.sh <<'EOF'\necho hi\nEOF"
    assert telling_line(repolaunch(f"{heredoc}\nbash: a.sh: Permission denied", 1), None, heredoc) == "bash: a.sh: Permission denied"


def test_the_line_quoted_for_a_failure_nothing_names_is_no_report_of_something_that_passed():
    """A script listing test results that exited non-zero (`xargs` gives 123 when one of its runs
    failed): its first lines say what passed; the failures come after them, at the end."""
    from org.kernel.classify import telling_line

    passed = "".join(f"PASSED io.kestra.core.ParserTest::shouldParse{n}Record()\n" for n in range(400))
    out = repolaunch("find . -name '*.xml' | xargs -0 perl -ne 'print'\n" + passed + "FAILED run()\nFAILED initializationError", 123)
    assert telling_line(out, None, "find . -name '*.xml' | xargs -0 perl -ne 'print'") == "FAILED run()"
    assert telling_line("ok  \tgithub.com/a/b\t0.1s\nFAIL\tgithub.com/a/c [build failed]") == "FAIL github.com/a/c [build failed]"
    assert telling_line("PASSED a\nPASSED b") is None


@pytest.mark.parametrize("output, error_line", [
    pytest.param("Test project /b\n 1/3 Test #1: a ....   Passed    0.01 sec\n\n67% tests passed, 1 tests failed out of 3\n\n"
                 "The following tests FAILED:\n\t 17 - oiiotool-text (Failed)\nErrors while running CTest\n", "17 - oiiotool-text (Failed)", id="ctest"),
    pytest.param("[ERROR] Failures: \n[ERROR]   FooTest.testBar:42 expected:<1> but was:<2>\n"
                 "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0\n[INFO] BUILD FAILURE\n",
                 "[ERROR] FooTest.testBar:42 expected:<1> but was:<2>", id="maven surefire"),
    pytest.param("FooTest > bar() FAILED\n    java.lang.AssertionError at FooTest.java:12\n\n3 tests completed, 1 failed\n\n"
                 "FAILURE: Build failed with an exception.\n", "FooTest > bar() FAILED", id="gradle"),
    pytest.param("  Failed Quartz.Tests.Unit.FooTest.Bar [12 ms]\n  Error Message:\n   Assert.AreEqual failed\n"
                 "Failed!  - Failed:     1, Passed:   100, Skipped:     0, Total:   101, Duration: 2 s - CoreTests.dll (net8.0)\n",
                 "Failed Quartz.Tests.Unit.FooTest.Bar [12 ms]", id="dotnet test"),
    pytest.param("?   \tgithub.com/a\t[no test files]\nok  \tgithub.com/a/b\t(cached)\n--- FAIL: TestX (0.00s)\n"
                 "FAIL\tgithub.com/a/c\t0.002s\nFAIL\n", "--- FAIL: TestX", id="go test, tab-separated, a package cached"),
])
def test_a_test_run_of_any_language_that_reports_failing_tests_worked(output, error_line):
    """The failing tests are the result, with their names: the tool did its job whatever status it
    exits with, and a run of the same tests that passes is no failure either."""
    verdict = classify_output(repolaunch(output, 1))
    assert (verdict.failed, verdict.error_type, verdict.error_line) == (False, "test", error_line)


@pytest.mark.parametrize("output", [
    "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS",
    "100% tests passed, 0 tests failed out of 60\n\nTotal Test time (real) =   1.20 sec",
    "Passed!  - Failed:     0, Passed:   100, Skipped:     0, Total:   100, Duration: 2 s - CoreTests.dll (net8.0)",
    "Test run summary: Passed!\n  total: 12\n  failed: 0\n  succeeded: 12",
])
def test_a_test_run_that_passes_is_no_failing_test(output):
    assert classify_output(repolaunch(output, 0)) == classify_output("")
