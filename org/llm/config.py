"""Loading ``<organizations>/supervisors.yaml``: a broken file is one log line and no supervisors.

For a chat in an Agent-Zero project, ``<organizations>/projects/<project>/supervisors.yaml``
is laid over it by the cascade's rules (org/kernel/cascade.py: mappings merge key by key,
lists and scalars replace, ``null`` removes), so a project can switch a supervisor off, give it
its own model or schedule, or reword its prompt without repeating the rest.
"""

from __future__ import annotations

from pathlib import Path

from org.contracts.supervisors import SupervisorsConfig
from org.kernel import cascade, loading
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


def read_config(path: Path, project_config: Path | None = None) -> SupervisorsConfig:
    """Parse and validate the config, with a project's file laid over it when there is one;
    ``DocumentError`` with file:line: field: reason problems (the file that gave the value)."""
    if project_config is None or not project_config.is_file():
        return loading.load(SupervisorsConfig, path)
    return resolve_config(path, project_config)[0]


def resolve_config(path: Path, project_config: Path | None = None) -> tuple[SupervisorsConfig, dict[tuple, cascade.Layer]]:
    """The config the cascade makes of the files that exist, and the layer that set each value."""
    layers = [cascade.Layer(str(f), *cascade.document(f)) for f in (path, project_config) if f is not None and f.is_file()]
    data, origins = cascade.merge(layers)

    def locate(field_path: tuple) -> tuple[str, int | None]:
        layer = cascade.origin_of(origins, field_path) or layers[-1]
        return layer.source, layer.line(field_path)

    return loading.validate_located(SupervisorsConfig, data, locate), origins


def load_config(layout_or_path: OrganizationLayout | Path | str | None = None,
                project_config: Path | None = None) -> SupervisorsConfig | None:
    """The supervisors' config, or None when there is none or it is broken.

    A missing file is silence (the supervisors are simply not configured). A broken one
    is logged once as ``file:line: field: reason`` and the supervisors stay off until it
    is fixed; ``a0org validate`` lists every problem in it.
    """
    path = config_path(layout_or_path)
    if not path.is_file() and not (project_config is not None and project_config.is_file()):
        return None
    try:
        config = read_config(path, project_config)
    except loading.DocumentError as exc:
        first = exc.problems[0]
        more = f" (and {len(exc.problems) - 1} more: a0org validate {path})" if len(exc.problems) > 1 else ""
        warn_once(f"{first}{more}; the LLM-backed supervisors stay off until it is fixed")
        return None
    forget_logged_about(f"{path}:")
    if project_config is not None:
        forget_logged_about(f"{project_config}:")
    return config


__all__ = ["CONFIG_NAME", "config_path", "load_config", "read_config", "resolve_config"]
