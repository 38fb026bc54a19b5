"""Loading ``<organizations>/supervisors.yaml``: a broken file is one log line and no supervisors."""

from __future__ import annotations

from pathlib import Path

from org.contracts.supervisors import SupervisorsConfig
from org.kernel import loading
from org.kernel.log import forget_logged_about, warn_once
from org.kernel.paths import OrganizationLayout, organizations_dir

CONFIG_NAME = "supervisors.yaml"


def config_path(layout_or_path: OrganizationLayout | Path | str | None = None) -> Path:
    """Where the config is: in a layout's folder, in a folder, the file itself, or in ``organizations_dir()``."""
    if layout_or_path is None:
        return organizations_dir() / CONFIG_NAME
    if isinstance(layout_or_path, OrganizationLayout):
        return layout_or_path.root / CONFIG_NAME
    path = Path(layout_or_path)
    return path / CONFIG_NAME if path.is_dir() else path


def read_config(path: Path) -> SupervisorsConfig:
    """Parse and validate one config file; ``DocumentError`` with file:line: field: reason problems."""
    return loading.load(SupervisorsConfig, path)


def load_config(layout_or_path: OrganizationLayout | Path | str | None = None) -> SupervisorsConfig | None:
    """The supervisors' config, or None when there is none or it is broken.

    A missing file is silence (the supervisors are simply not configured). A broken one
    is logged once as ``file:line: field: reason`` and the supervisors stay off until it
    is fixed; ``a0org validate`` lists every problem in it.
    """
    path = config_path(layout_or_path)
    if not path.is_file():
        return None
    try:
        config = read_config(path)
    except loading.DocumentError as exc:
        first = exc.problems[0]
        more = f" (and {len(exc.problems) - 1} more: a0org validate {path})" if len(exc.problems) > 1 else ""
        warn_once(f"{first}{more}; the LLM-backed supervisors stay off until it is fixed")
        return None
    forget_logged_about(f"{path}:")
    return config


__all__ = ["CONFIG_NAME", "config_path", "load_config", "read_config"]
