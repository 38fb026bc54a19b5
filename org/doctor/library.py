"""The ``org`` library as this Python imports it (run doctor with Agent-Zero's Python)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from org.doctor.report import OK, PROBLEM, WARNING, Check
from org.install.contents import PACKAGE


def check_library() -> list[Check]:
    import org

    location = Path(org.__file__).resolve().parent
    try:
        from importlib import metadata

        dist_version: str | None = metadata.version(PACKAGE)
    except Exception:
        dist_version = None
    version = getattr(org, "__version__", None)
    details = {"version": version, "location": str(location), "distribution": dist_version}
    if dist_version is None:
        checks = [Check("library", WARNING, "org",
                        f"org {version} is imported from {location}, but {PACKAGE} is not installed in "
                        f"{sys.executable}; Agent-Zero will not find it",
                        "run install_all.sh (it pip-installs the library into Agent-Zero's Python)", details)]
    else:
        checks = [Check("library", OK, "org", f"org {version} ({PACKAGE} {dist_version}) from {location}", details=details)]
    try:
        importlib.import_module("org.a0.hooks")
    except Exception as exc:  # a missing dependency is the usual cause
        checks.append(Check("library", PROBLEM, "org.a0.hooks", f"cannot import org.a0.hooks: {type(exc).__name__}: {exc}",
                            "install the library with its dependencies: run install_all.sh, "
                            f"or `{sys.executable} -m pip install --upgrade <pack folder>`"))
    return checks
