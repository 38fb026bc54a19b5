"""Edits that cannot reach the code that runs: the agent edits one copy of a file while the
program imports another (a checkout copied to `/workspace` while Python imports `/testbed`, a
package installed into site-packages while the agent edits its source).

The proof is a traceback: a frame in a file under another root that ends like a file the agent
edited. It is said at the first such run, once for each pair of copies in the task, and once
more when three more runs have gone through that copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_judgement import TOOL, sh

from org.contracts.salute import OutcomeSignal
from org.kernel.copies import added_lines, other_copy, path_tail, traceback_files, written_paths
from org.kernel.outcomes import ledger_of, record_outcome

EDITED = "/workspace/mpl__mpl__3.6/lib/matplotlib/backends/backend_ps.py"
RAN = "/testbed/lib/matplotlib/backends/backend_ps.py"


def through(path: str, error: str = "TypeError: cannot unpack non-iterable NoneType object") -> str:
    return (f'Traceback (most recent call last):\n  File "/workspace/mpl__mpl__3.6/repro.py", line 4, in <module>\n    fig.savefig("a.eps")\n'
            f'  File "{path}", line 673, in draw_text\n    for ps_name, xs_names in stream:\n{error}\n')


def editor(path: str, old: str = "stream.append(curr_stream)", new: str = "if curr_stream:\n    stream.append(curr_stream)") -> dict:
    return {"tool": "str_replace_editor", "args": {"command": "str_replace", "path": path, "old_str": old, "new_str": new},
            "output": f"The file {path} has been edited."}


@pytest.mark.parametrize("args, written", [
    ({"command": "str_replace", "path": EDITED, "old_str": "a", "new_str": "b"}, [EDITED]),
    ({"runtime": "terminal", "code": "cd /workspace/mpl__mpl__3.6 && sed -i 's/a/b/' lib/matplotlib/backends/backend_ps.py"}, [EDITED]),
    ({"runtime": "terminal", "code": "sed -i -e 's/a/b/' -e 's/c/d/' /w/a.py /w/b.py"}, ["/w/a.py", "/w/b.py"]),
    ({"runtime": "terminal", "code": "perl -pi -e 's/a/b/' /w/a.py"}, ["/w/a.py"]),
    ({"runtime": "terminal", "code": "cat > /w/t.py << 'EOF'\nif a > b:\n    print(a)\nEOF\npython /w/t.py"}, ["/w/t.py"]),
    ({"runtime": "terminal", "code": "cp lib/a.py /testbed/lib/a.py"}, ["/testbed/lib/a.py"]),
    ({"runtime": "terminal", "code": "cp -r /testbed/. /workspace/repo"}, ["/workspace/repo"]),
    ({"runtime": "python", "code": "open('/root/p/a.py', 'w').write(text)"}, ["/root/p/a.py"]),
    ({"runtime": "terminal", "code": "echo done > notes.txt; python t.py 2> /dev/null"}, []),  # relative, with no folder known
    # a patch applied names its files inside the patch: the folder it works in stands for them
    ({"runtime": "terminal", "code": "cd /testbed && git apply /tmp/fix.diff"}, ["/testbed"]),
    ({"runtime": "terminal", "code": "cd /testbed && patch -p1 < /tmp/fix.diff"}, ["/testbed"]),
    ({"runtime": "terminal", "code": "git diff > /tmp/fix.diff"}, ["/tmp/fix.diff"]),
    ({"command": "str_replace", "path": "lib/a.py", "old_str": "a", "new_str": "b"}, []),
])
def test_the_files_an_edit_writes(args, written):
    assert written_paths(args) == written


def test_the_files_a_traceback_ran_python_s_and_pytest_s():
    pytest_report = ("INTERNALERROR>   File \"/testbed/src/_pytest/main.py\", line 191, in wrap_session\n"
                     "INTERNALERROR>     session.exitstatus = doit(config, session) or 0\n"
                     "/testbed/lib/matplotlib/colorbar.py:1234: in update_normal\n    self._reset()\nE   ValueError: x\n")
    assert traceback_files(through(RAN)) == {"/workspace/mpl__mpl__3.6/repro.py": {'fig.savefig("a.eps")'},
                                             RAN: {"for ps_name, xs_names in stream:"}}
    assert traceback_files(pytest_report) == {"/testbed/src/_pytest/main.py": {"session.exitstatus = doit(config, session) or 0"},
                                              "/testbed/lib/matplotlib/colorbar.py": set()}
    assert traceback_files('  File "<string>", line 1\n  File "app.py", line 2\n') == {}  # not a path, or relative: nothing known


@pytest.mark.parametrize("ran, written, copy", [
    (RAN, [EDITED], (RAN, EDITED)),
    ("/usr/lib/python3.12/site-packages/mypkg/core.py", ["/root/mypkg/src/mypkg/core.py"],
     ("/usr/lib/python3.12/site-packages/mypkg/core.py", "/root/mypkg/src/mypkg/core.py")),
    # two parts are shared by unrelated projects
    ("/usr/lib/python3/dist-packages/other/tests/conftest.py", ["/root/proj/tests/conftest.py"], None),
    ("/srv/app/main.py", ["/root/app/main.py"], None),
    (RAN, [EDITED, "/testbed"], None),  # the agent copied the checkout over the copy that runs: its own work
    (RAN, [RAN], None),
])
def test_a_file_that_ran_is_another_copy_of_one_edited_when_their_ends_match(ran, written, copy):
    assert other_copy({ran: set()}, dict.fromkeys(written, frozenset())) == copy


def test_a_file_that_shows_a_line_the_agent_wrote_has_its_edit():
    """`/workspace` a link to `/testbed` that the pack cannot see (a remote terminal, a replay):
    Python shows the line the edit added, read from the file that ran, so the edit is in it."""
    edit = {"command": "str_replace", "path": EDITED, "old_str": "    stream.append(curr_stream)",
            "new_str": "    if curr_stream:\n        stream.append(curr_stream)"}
    written = {EDITED: added_lines(edit)}
    assert written[EDITED] == {"if curr_stream:"}  # the line kept as it was is none the edit added
    assert other_copy({RAN: {"if curr_stream:"}}, written) is None
    assert other_copy({RAN: {"stream.append(curr_stream)"}}, written) == (RAN, EDITED)


def test_a_path_is_kept_by_its_end():
    assert path_tail("/a/b.py") == "/a/b.py"
    assert path_tail("/" + "x" * 300 + "/lib/b.py", 20) == "…" + "/lib/b.py".rjust(19, "x")


def test_two_copies_on_this_disk_are_two_files_and_a_link_is_one(tmp_path: Path):
    for root in ("testbed", "copied"):
        (tmp_path / root / "lib" / "pkg").mkdir(parents=True)
        (tmp_path / root / "lib" / "pkg" / "core.py").write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "testbed")
    ran = str(tmp_path / "testbed" / "lib" / "pkg" / "core.py")
    def copy_of(edited: Path) -> tuple[str, str] | None:
        return other_copy({ran: set()}, {str(edited / "lib" / "pkg" / "core.py"): frozenset()})

    assert copy_of(tmp_path / "copied") is not None
    assert copy_of(tmp_path / "linked") is None  # the same file
    assert copy_of(tmp_path / "gone") is None  # one of them seen here and the other not: nothing is known


def test_a_real_python_run_of_the_installed_copy_is_found(tmp_path: Path):
    """A real interpreter imports the copy installed in site-packages while the agent edits its source."""
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    installed, checkout = site / "shapes", tmp_path / "work" / "src" / "shapes"
    for package in (installed, checkout):
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "area.py").write_text("def area(w, h):\n    return w * hh\n")
    data: dict = {}
    ledger_of(data).tick(True)
    fix = {"runtime": "terminal", "code": f"sed -i 's/hh/h/' {checkout / 'area.py'}"}
    subprocess.run(["sed", "-i", "s/hh/h/", str(checkout / "area.py")], check=True)
    record_outcome(data, TOOL, fix, "")
    run = subprocess.run([sys.executable, "-c", "from shapes.area import area; print(area(2, 3))"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(site)}, cwd=tmp_path)
    assert "NameError" in run.stderr
    ledger_of(data).tick(False)
    outcome = record_outcome(data, TOOL, {"runtime": "terminal", "code": "python -c 'from shapes.area import area; print(area(2, 3))'"},
                             run.stdout + run.stderr)
    assert (outcome.ran_copy, outcome.edited_copy) == (str(installed / "area.py"), str(checkout / "area.py"))


def test_a_run_through_another_copy_of_the_edited_file_is_said_at_once_and_once(make_session):
    session = make_session()
    session.run(editor(EDITED), sh("cd /workspace/mpl__mpl__3.6 && python repro.py", through(RAN)))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (2, "rerun")
    assert f"went through `{RAN}`, but you edited `{EDITED}`" in text
    assert "`cd /workspace/mpl__mpl__3.6 && python repro.py`" in text
    assert "Make the run import your copy (put the folder that holds its package first on PYTHONPATH" in text
    # the task moves on (new scripts, new output), and the agent still runs the other copy: not said at each run
    session.run(sh("cd /workspace/mpl__mpl__3.6 && python debug1.py", "Figure saved"),
                sh("cd /workspace/mpl__mpl__3.6 && python debug2.py", through(RAN, "TypeError: other")),
                sh("ls /workspace", "mpl__mpl__3.6"),
                sh("cd /workspace/mpl__mpl__3.6 && python debug3.py", through(RAN, "ValueError: third")))
    assert [(t, a) for t, a, _ in session.steering()] == [(2, "rerun")]
    # the fourth run through it: the steering went unheard, said once more, with the count; and no more
    session.run(sh("cd /workspace/mpl__mpl__3.6 && python debug4.py", through(RAN, "KeyError: 'x'")),
                sh("cd /workspace/mpl__mpl__3.6 && python debug5.py", through(RAN, "KeyError: 'y'")))
    [_, (turn, anomaly, again)] = session.steering()
    assert (turn, anomaly) == (7, "rerun") and again.startswith("[SUPERVISOR] Still no effect: 4 runs have now gone through `/testbed/"), again
    assert "the result is not cached" in again


def test_a_run_that_chooses_its_own_import_path_is_no_mistake(make_session):
    """The agent takes its checkout off `sys.path` to see what the original does: it chose the copy it runs."""
    session = make_session()
    session.run(editor(EDITED), sh("cd /testbed && python -c \"import sys; sys.path = [p for p in sys.path if 'testbed' not in p]; import repro\"",
                                   through(RAN)))
    assert session.steering() == []


def test_no_steering_once_the_copy_that_runs_is_the_edited_one(make_session):
    session = make_session()
    session.run(editor(EDITED), sh(f"cp {EDITED} {RAN}", ""),  # the agent put its change where it runs
                sh("cd /workspace/mpl__mpl__3.6 && python repro.py", through(RAN)))
    assert session.steering() == []


def test_no_steering_once_the_agent_applied_its_change_to_the_copy_that_runs(make_session):
    session = make_session()
    session.run(editor(EDITED), sh("cd /workspace/mpl__mpl__3.6 && git diff > /tmp/fix.diff", ""),
                sh("cd /testbed && git apply /tmp/fix.diff", ""),
                sh("cd /workspace/mpl__mpl__3.6 && python repro.py", through(RAN, "ValueError: the next bug")))
    assert session.steering() == []


def test_a_traceback_through_the_edited_file_itself_says_nothing(make_session):
    session = make_session()
    session.run(editor(RAN), sh("cd /testbed && python repro.py", through(RAN)),
                sh("cd /testbed && python other.py", through("/opt/conda/lib/python3.9/site-packages/numpy/core/fromnumeric.py")))
    assert session.steering() == []


def test_a_unit_s_report_carries_the_copies_to_the_xo():
    data: dict = {}
    ledger_of(data).tick(True)
    record_outcome(data, "str_replace_editor", editor(EDITED)["args"], "edited")
    ledger_of(data).tick(False)
    live = record_outcome(data, TOOL, {"runtime": "terminal", "code": "python repro.py"}, through(RAN))
    reported = OutcomeSignal(**{name: getattr(live, name) for name in OutcomeSignal.model_fields})
    assert (reported.ran_copy, reported.edited_copy) == (RAN, EDITED)
    long = "/" + "d" * 250 + "/lib/matplotlib/backends/backend_ps.py"
    record_outcome(data, "str_replace_editor", editor(long)["args"], "edited")
    again = record_outcome(data, TOOL, {"runtime": "terminal", "code": "python repro.py"}, through(RAN))
    assert again.edited_copy.endswith("/lib/matplotlib/backends/backend_ps.py") and len(again.edited_copy) == 200
    OutcomeSignal(**{name: getattr(again, name) for name in OutcomeSignal.model_fields})  # within the contract's bounds
