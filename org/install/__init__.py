"""Install the pack into an Agent-Zero tree: library, hooks, doctrine files, switch.

Run as ``python -m org.install {all,supervisor-loop,supervisors} [options]`` with the
pack directory on ``PYTHONPATH``; ``install_all.sh`` and ``install_supervisor_loop.sh``
do exactly that with Agent-Zero's own Python.

**Standard library only.** The installer runs before the pack's dependencies
(pydantic, PyYAML, ...) are installed, so it must not import them, nor any ``org``
module that does: it uses ``org.__version__`` and :mod:`org.kernel.files`, both
standard library only. ``org.doctor`` reuses its era detection and clash scan.

How it works: every run first builds a *plan* (:mod:`.plans`), a list of steps
(:mod:`.steps`) that each say what a file or folder is now and what would change.
``--check-only`` prints the states, ``--dry-run`` prints the changes, a normal run
checks that every path it will touch is writable and then applies them. Because a
step that finds its target already right has nothing to apply, a second run changes
nothing.

* :mod:`.eras`: which Agent-Zero a tree is, where its loader looks, name clashes;
* :mod:`.contents`: the pack's hooks and doctrine files, and where the pack is;
* :mod:`.library`: whether Agent-Zero's Python imports the library, and pip;
* :mod:`.manifest`: doctrine files the user may edit, ``.new`` files, activation;
* :mod:`.steps`: a plan's steps, and printing and applying them;
* :mod:`.plans`: the install and uninstall plans of each component;
* :mod:`.cli`: the command line the wrapper scripts run.
"""


class InstallError(Exception):
    """An expected failure. The message names the path and the reason; no traceback is shown."""
