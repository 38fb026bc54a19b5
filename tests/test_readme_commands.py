"""The README's commands work as written, also where the system Python is externally managed
(PEP 668: pip refuses to install outside a virtual environment). ``PIP_REQUIRE_VIRTUALENV``
makes pip refuse the same way on any machine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def quick_start_commands() -> list[str]:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, re.S)


@pytest.mark.registry
def test_the_quick_start_works_where_pip_may_not_touch_the_system_python(tmp_path):
    demo, _tests, _registry = quick_start_commands()
    copy = tmp_path / "pack"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", ".pytest_cache"))
    python3 = tmp_path / "bin" / "python3"
    python3.parent.mkdir()
    python3.symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PIP_REQUIRE_VIRTUALENV="1", PATH=f"{python3.parent}:{env.get('PATH', '')}")
    done = subprocess.run(["bash", "-c", demo], cwd=copy, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "PACE" in done.stdout and "Knowledge store:" in done.stdout


def test_ci_runs_the_readme_test_command_as_written():
    _demo, tests, registry = quick_start_commands()
    assert tests.startswith("python3 -m venv .venv && . .venv/bin/activate && ")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci
    assert registry == "A0ORG_TEST_REGISTRY=1 python -m pytest -m registry" and registry in ci
