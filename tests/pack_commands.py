"""The pack's commands, run the way a user runs them: as subprocesses.

``a0org`` is ``python -m org`` from the repository root; the installer is a bash wrapper
(``install_all.sh``, ``install_supervisor_loop.sh``) in a pack folder, usually the copy
made by the ``pack`` fixture (conftest), run from beside that folder.

(Not called ``helpers``: the hook files import Agent-Zero's ``helpers`` package, and the
tests folder is on ``sys.path``.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the installer's switch for installing (or uninstalling) one phase alone
ENV_COMPONENT = "A0ORG_INSTALL_COMPONENT"


def a0org(*args: str | Path, cwd: Path = ROOT, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m org ARGS`` (``env`` replaces the environment when given)."""
    return subprocess.run([sys.executable, "-m", "org", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def run_script(pack: Path, script: str, *args: str, python: str = sys.executable,
               component: str | None = None) -> subprocess.CompletedProcess:
    """One of the pack's bash wrappers with ``--python PYTHON ARGS``; ``component`` sets
    :data:`ENV_COMPONENT`."""
    env = {**os.environ, ENV_COMPONENT: component} if component else None
    return subprocess.run(["bash", str(pack / script), "--python", python, *args],
                          capture_output=True, text=True, timeout=600, check=False, cwd=pack.parent, env=env)


def install(pack: Path, tree: Path, *args: str, python: str = sys.executable,
            component: str | None = None) -> subprocess.CompletedProcess:
    """``install_all.sh --a0-root TREE ARGS`` without the library phase (``--no-library``;
    a single ``component`` has no library phase to skip); the test fails unless it succeeds."""
    skip_library = () if component else ("--no-library",)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), *skip_library, *args,
                        python=python, component=component)
    assert result.returncode == 0, result.stdout + result.stderr
    return result
