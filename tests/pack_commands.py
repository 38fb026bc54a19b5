"""The pack's commands, run the way a user runs them.

``a0org`` is the command line's ``main`` called in this process, with its own working
folder, environment, output streams and log memory, as a fresh ``python -m org`` would have
them; ``process=True`` runs ``python -m org`` from the repository root instead, for the tests
where the process itself is the point (its start, its environment). The installer is a bash wrapper
(``install_all.sh``, ``install_supervisor_loop.sh``) in a pack folder, usually the copy
made by the ``pack`` fixture (conftest), run from beside that folder.

(Not called ``helpers``: the hook files import Agent-Zero's ``helpers`` package, and the
tests folder is on ``sys.path``.)
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
#: The Python the installer's wrappers are given as Agent-Zero's (``--python``): the base interpreter of
#: the test environment, without this pack installed, as Agent-Zero's Python is before the library
#: phase. The installer needs only the standard library; its library check then finds no ``org``
#: whether or not the test environment has the pack installed (the README's command installs it,
#: a checkout run in place does not), so every run sees the same, and no run imports the whole
#: pack to check it (a third of an install's time where the pack is installed).
_BASE_PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
INSTALLER_PYTHON = str(_BASE_PYTHON) if sys.prefix != sys.base_prefix and _BASE_PYTHON.is_file() else sys.executable
#: the installer's switch for installing (or uninstalling) one phase alone
ENV_COMPONENT = "A0ORG_INSTALL_COMPONENT"


def a0org(*args: str | Path, cwd: Path = ROOT, timeout: float = 120, env: dict[str, str] | None = None,
          process: bool = False) -> subprocess.CompletedProcess:
    """``a0org ARGS``: its exit code, standard output and standard error (``env`` replaces the
    environment when given). In this process unless ``process``; ``timeout`` bounds a process."""
    if not process:
        return _in_process([str(a) for a in args], cwd, env)
    return subprocess.run([sys.executable, "-m", "org", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _in_process(args: list[str], cwd: Path, env: dict[str, str] | None) -> subprocess.CompletedProcess:
    from org.cli import main
    from org.kernel.log import forget_logged, logger

    out, err = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("[a0org] %(levelname)s %(message)s"))
    forget_logged()  # a new process has logged nothing yet
    with _environment(env), contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        logger.addHandler(handler)
        try:
            code = main(args)
        except SystemExit as exc:  # argparse's usage errors, and commands that exit
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            logger.removeHandler(handler)
            forget_logged()
    return subprocess.CompletedProcess(["a0org", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environment(env: dict[str, str] | None) -> Iterator[None]:
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_script(pack: Path, script: str, *args: str, python: str = INSTALLER_PYTHON,
               component: str | None = None) -> subprocess.CompletedProcess:
    """One of the pack's bash wrappers with ``--python PYTHON ARGS``; ``component`` sets
    :data:`ENV_COMPONENT`."""
    env = {**os.environ, ENV_COMPONENT: component} if component else None
    return subprocess.run(["bash", str(pack / script), "--python", python, *args],
                          capture_output=True, text=True, timeout=600, check=False, cwd=pack.parent, env=env)


def install(pack: Path, tree: Path, *args: str, python: str = INSTALLER_PYTHON,
            component: str | None = None) -> subprocess.CompletedProcess:
    """``install_all.sh --a0-root TREE ARGS`` without the library phase (``--no-library``;
    a single ``component`` has no library phase to skip); the test fails unless it succeeds."""
    skip_library = () if component else ("--no-library",)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), *skip_library, *args,
                        python=python, component=component)
    assert result.returncode == 0, result.stdout + result.stderr
    return result
