"""The library in Agent-Zero's Python: whether it imports this pack's ``org``, and pip."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from org.install import InstallError
from org.install.contents import PACKAGE, Pack
from org.install.steps import Plan, Step

_LIBRARY_PROBE = r"""
import json, sys
out = {}
try:
    import org
    out["version"] = getattr(org, "__version__", None)
    out["location"] = org.__file__
except Exception as exc:
    out["import_error"] = f"{type(exc).__name__}: {exc}"
try:
    from importlib import metadata
    dist = metadata.distribution(sys.argv[1])
    out["dist_version"] = dist.version
    out["record"] = {str(f): f.hash.value for f in (dist.files or []) if str(f).startswith("org/") and f.hash}
except Exception as exc:
    out["dist_error"] = f"{type(exc).__name__}: {exc}"
if "import_error" not in out:
    try:
        import org.a0.hooks
    except Exception as exc:
        out["hooks_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def _clean_env() -> dict[str, str]:
    # The wrappers put the pack on PYTHONPATH; Agent-Zero does not, so probe without it.
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@dataclass(frozen=True)
class LibraryStatus:
    state: str  # "missing" | "outdated" | "current"
    detail: str
    hooks_error: str | None = None
    installed: bool = False


def probe_library(python: str) -> dict:
    """What ``python`` imports as ``org`` when run the way Agent-Zero runs (no PYTHONPATH, neutral cwd)."""
    try:
        result = subprocess.run(
            [python, "-c", _LIBRARY_PROBE, PACKAGE],
            capture_output=True, text=True, timeout=120, env=_clean_env(), cwd=tempfile.gettempdir(), check=False,
        )
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        raise InstallError(f"cannot run {python} to check the library: {exc}") from None


def library_status(python: str, pack: Pack) -> LibraryStatus:
    """Whether ``python`` imports this pack's ``org`` the way Agent-Zero will."""
    probe = probe_library(python)
    installed = "dist_version" in probe
    if "import_error" in probe:
        return LibraryStatus("missing", f"{python} cannot import org ({probe['import_error']})", installed=installed)
    location = Path(probe["location"]).resolve()
    if pack.root in location.parents:
        detail = f"org {probe['version']} (editable install of {pack.root})"
        return LibraryStatus("current", detail, probe.get("hooks_error"), installed)
    if not installed:
        return LibraryStatus("missing", f"org at {location} is not the {PACKAGE} distribution")
    stale = _stale_library_files(pack, probe.get("record", {}))
    hooks_error = probe.get("hooks_error")
    where = f"org {probe['dist_version']} at {location.parent}"
    if stale:
        more = f" and {len(stale) - 1} more" if len(stale) > 1 else ""
        return LibraryStatus("outdated", f"{where}; differs from the pack in {stale[0]}{more}", hooks_error, installed)
    if probe["dist_version"] != pack.version:
        return LibraryStatus("outdated", f"{where}; the pack is {pack.version}", hooks_error, installed)
    return LibraryStatus("current", where, hooks_error, installed)


def _stale_library_files(pack: Pack, record: dict[str, str]) -> list[str]:
    """Pack files under org/ whose installed copy (per the wheel's RECORD) differs or is missing."""
    stale = []
    org_dir = pack.root / "org"
    for path in sorted(org_dir.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        rel = "org/" + path.relative_to(org_dir).as_posix()
        if path.suffix != ".py" and rel not in record:
            continue  # not packaged (only .py and declared package data are)
        digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
        if record.get(rel) != digest:
            stale.append(rel)
    return stale


def _pip_command(python: str, *args: str) -> list[str]:
    """``python -m pip ...``, or ``uv pip ... --python python`` where the venv has no pip (uv-made venvs)."""
    has_pip = subprocess.run(
        [python, "-c", "import pip"], capture_output=True, env=_clean_env(), check=False
    ).returncode == 0
    if has_pip:
        return [python, "-m", "pip", *args]
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip", *args, "--python", python]
    raise InstallError(
        f"{python} has no pip and uv is not on PATH, so the library cannot be installed. "
        f"Run `{python} -m ensurepip`, or pass --no-library and install {PACKAGE} yourself."
    )


def _run_pip(python: str, *args: str) -> None:
    command = _pip_command(python, *args)
    print(f"    $ {' '.join(command)}", flush=True)
    result = subprocess.run(command, env=_clean_env(), cwd=tempfile.gettempdir(), check=False)
    if result.returncode != 0:
        raise InstallError(f"`{' '.join(command)}` failed with exit code {result.returncode}; see its output above.")


def library_subject(python: str) -> str:
    return f"library {PACKAGE} ({python})"


def library_step(python: str, pack: Pack, plan: Plan) -> Step:
    status = library_status(python, pack)
    if status.state == "current":
        plan.warnings += library_warnings(status, python)
        return Step(library_subject(python), "current", note=status.detail)
    install = lambda: _run_pip(python, "install", "--upgrade", str(pack.root))  # noqa: E731
    return Step(library_subject(python), status.state, "pip install", install, note=status.detail)


def library_warnings(status: LibraryStatus, python: str) -> list[str]:
    """What to tell someone whose hooks will find no (working) library."""
    warnings = []
    if status.state != "current":
        warnings.append(
            f"library: {status.state}: {status.detail}. The hooks do nothing without it: "
            "run install_all.sh without --no-library, with this Python."
        )
    if status.hooks_error:
        warnings.append(
            f"`import org.a0.hooks` fails in {python}: {status.hooks_error}. "
            "The hooks do nothing until this is fixed; check that the library's dependencies are installed."
        )
    return warnings


def library_removal_step(python: str) -> Step:
    subject = f"library {PACKAGE} in {python}"
    if "dist_version" not in probe_library(python):
        return Step(subject, "not installed")
    return Step(subject, "installed", "pip uninstall -y", lambda: _run_pip(python, "uninstall", "-y", PACKAGE))

