"""Temporary Agent-Zero-shaped trees of each era, and a temporary copy of the pack.

A tree holds only what the installer and doctor look at: ``agent.py`` and ``run_ui.py``
as markers, the era's ``Extension`` base class module in the era's place (a few
hand-written lines with the same constructor and ``execute`` signature as the real
one, no Agent-Zero code), ``python/helpers/subagents.py`` for era C, and the core
extension folders.

Eras (see AGENT_ZERO_FACTS.md section 0):

- ``"A"``: v0.9.2 and older, base class only, no ``call_extensions`` (unsupported)
- ``"B3"``: v0.9.3/v0.9.4, ``call_extensions`` but no ``tool_execute_after`` point
- ``"B"``: v0.9.5 to v0.9.7
- ``"C"``: v0.9.8 to v0.9.8.3
- ``"D"``: v0.9.9.0 and newer, v1.x, as far as extension folders go (no plugin system)
- ``"P"``: v0.9.9.0 and newer, v1.x, with the plugin system: ``helpers/plugins.py`` naming
  ``plugin.yaml`` and the ``.toggle-0`` / ``.toggle-1`` switches, and ``usr/plugins/``
  (docs/agent-zero.md, "The plugin form")
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

POINTS = ("message_loop_prompts_before", "before_main_llm_call", "tool_execute_before", "tool_execute_after", "message_loop_end")
HOOK_FILES = {
    "message_loop_prompts_before": "_20_org_inbox.py",
    "before_main_llm_call": "_12_org_dispatcher.py",
    "tool_execute_before": "_30_org_breaker.py",
    "tool_execute_after": "_25_org_tool_outcomes.py",
    "message_loop_end": "_50_supervisor_loop.py",
}
#: the points v0.9.3 and v0.9.4 do not call
TOOL_POINTS = ("tool_execute_before", "tool_execute_after")

_BASE_CLASS = '''\
from abc import abstractmethod
from typing import Any


class Extension:

    def __init__(self, agent, **kwargs):
        self.agent = agent
        self.kwargs = kwargs

    @abstractmethod
    async def execute(self, **kwargs) -> Any:
        pass
'''

_OLD_BASE_CLASS = '''\
from abc import abstractmethod
from typing import Any


class Extension:

    def __init__(self, agent, *args, **kwargs):
        self.agent = agent
        self.kwargs = kwargs

    @abstractmethod
    async def execute(self, **kwargs) -> Any:
        pass
'''

#: the names the installer looks for in helpers/plugins.py; not Agent-Zero's code
_PLUGINS_MODULE = '''\
# stand-in for Agent-Zero's helpers/plugins.py: the file names of its plugin system
META_FILE_NAME = "plugin.yaml"
DISABLED_FILE_NAME = ".toggle-0"
ENABLED_FILE_NAME = ".toggle-1"
'''

_CALL_EXTENSIONS = '''

async def call_extensions(extension_point: str, agent=None, **kwargs) -> Any:
    raise NotImplementedError("stand-in tree: only the installer's era detection reads this file")
'''


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_a0_tree(base: Path, era: str) -> Path:
    """An Agent-Zero-shaped tree of ``era`` at ``base`` (created); returns ``base``."""
    base.mkdir(parents=True, exist_ok=True)
    points = [p for p in POINTS if not (era == "B3" and p in TOOL_POINTS)]
    calls = "".join(f'#     await self.call_extensions("{p}", ...)\n' for p in points)
    _write(base / "agent.py", "# stand-in for Agent-Zero's agent.py; extension points it calls:\n" + calls)
    _write(base / "run_ui.py", "# stand-in for Agent-Zero's run_ui.py\n")
    (base / "usr").mkdir(exist_ok=True)
    if era in ("D", "P"):
        _write(base / "helpers" / "extension.py", _BASE_CLASS)
        for point in points:
            (base / "extensions" / "python" / point).mkdir(parents=True, exist_ok=True)
        if era == "P":
            _write(base / "helpers" / "plugins.py", _PLUGINS_MODULE)
            (base / "usr" / "plugins").mkdir()
            _write(base / "plugins" / "_model_config" / "plugin.yaml", "name: _model_config\ntitle: Model config\n")
    elif era in ("B", "B3", "C", "A"):
        _write(base / "python" / "__init__.py", "")
        module = _OLD_BASE_CLASS if era == "A" else _BASE_CLASS + _CALL_EXTENSIONS
        _write(base / "python" / "helpers" / "extension.py", module)
        if era == "C":
            _write(base / "python" / "helpers" / "subagents.py", "def get_paths(agent, *subpaths, **kwargs):\n    return []\n")
        for point in points:
            (base / "python" / "extensions" / point).mkdir(parents=True, exist_ok=True)
    else:
        raise ValueError(f"unknown era {era!r}")
    return base


#: where each era's installer puts the hooks, relative to the tree
HOOK_DIRS = {
    "D": "usr/extensions/python/{point}",
    "P": "usr/plugins/a0_org_kernel/extensions/python/{point}",
    "C": "usr/extensions/{point}",
    "B": "python/extensions/{point}",
    "B3": "python/extensions/{point}",
}


def hook_path(tree: Path, era: str, point: str) -> Path:
    return tree / HOOK_DIRS[era].format(point=point) / HOOK_FILES[point]


# --------------------------------------------------------------------------- the pack

STAND_IN_HOOK = '''\
"""Stand-in for the pack's {point} hook: the same import pattern, no behaviour."""

try:
    from helpers.extension import Extension
except ImportError:
    from python.helpers.extension import Extension

try:
    import {module} as _org_hooks
    ORG_IMPORT_ERROR = None
except Exception as exc:  # the hook must load even when the library is missing
    _org_hooks = None
    ORG_IMPORT_ERROR = f"{{type(exc).__name__}}: {{exc}}"


class {cls}(Extension):

    async def execute(self, **kwargs):
        return None
'''

ROLE_TEMPLATE = """\
# yaml-language-server: $schema=../schemas/role_profile.schema.json
schema_version: 1
role_id: {role_id}
role_name: {role_id}
"""

ORG_TEMPLATE = """\
# yaml-language-server: $schema=../../schemas/organization.schema.json
schema_version: 1
org_id: {org_id}
org_name: {org_id}
default_role: lead
hierarchy:
  lead:
    subordinates: [coder]
"""


def real_hooks_available() -> bool:
    """True once the repository ships its hook files; tests then use the real ones."""
    return all((REPO / "extensions" / p / HOOK_FILES[p]).is_file() for p in POINTS)


def stand_in_hook(point: str, module: str = "org") -> str:
    cls = "".join(part.title() for part in HOOK_FILES[point][4:-3].split("_"))
    return STAND_IN_HOOK.format(point=point, module=module, cls=cls)


def real_doctrine_available() -> bool:
    return any((REPO / "roles").glob("*.yaml")) and any((REPO / "roles" / "organizations").glob("*.yaml"))


#: the ``org`` files a pack copy holds: the installer and what it imports, and doctor with its loader
PACK_MODULES = ("__init__.py", "install", "kernel/__init__.py", "kernel/files.py", "doctor", "a0/__init__.py", "a0/loader.py", "a0/webui")


def make_pack(base: Path, *, hook_module: str = "org", use_real_hooks: bool | None = None, real_doctrine: bool = False) -> Path:
    """A copy of the pack at ``base``: the real installer, wrappers and ``org`` package
    files it needs, plus hooks (the repository's when it has them, else stand-ins whose
    guarded import is ``hook_module``) and doctrine: the repository's roles, templates and
    schemas with ``real_doctrine``, else two placeholder roles (``lead``, ``coder``), one
    template (``software_dev``) and two schemas, so installer tests know every name.
    """
    (base / "org").mkdir(parents=True)
    for script in ("install_all.sh", "install_supervisor_loop.sh"):
        shutil.copy2(REPO / script, base / script)
    for rel in PACK_MODULES:
        source = REPO / "org" / rel
        if source.is_dir():
            shutil.copytree(source, base / "org" / rel, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.is_file():
            (base / "org" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, base / "org" / rel)
    real = real_hooks_available() if use_real_hooks is None else use_real_hooks
    for point in POINTS:
        target = base / "extensions" / point / HOOK_FILES[point]
        target.parent.mkdir(parents=True)
        if real:
            shutil.copy2(REPO / "extensions" / point / HOOK_FILES[point], target)
        else:
            target.write_text(stand_in_hook(point, hook_module), encoding="utf-8")
    if real_doctrine:
        for folder in ("roles", "schemas"):
            shutil.copytree(REPO / folder, base / folder)
        return base
    for role_id in ("lead", "coder"):
        _write(base / "roles" / f"{role_id}.yaml", ROLE_TEMPLATE.format(role_id=role_id))
    _write(base / "roles" / "organizations" / "software_dev.yaml", ORG_TEMPLATE.format(org_id="software_dev"))
    for stem in ("role_profile", "organization"):
        _write(base / "schemas" / f"{stem}.schema.json", '{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "%s"}\n' % stem)
    return base


# --------------------------------------------------------------------------- observing a tree


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a hash of its content (folders: "dir")."""
    listing: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            listing[rel] = "link:" + str(path.readlink())
        elif path.is_dir():
            listing[rel] = "dir"
        else:
            listing[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return listing
