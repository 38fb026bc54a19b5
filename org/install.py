"""Install the pack into an Agent-Zero tree: library, hooks, doctrine files, switch.

Run as ``python -m org.install {all,supervisor-loop} [options]`` with the pack
directory on ``PYTHONPATH``; ``install_all.sh`` and ``install_supervisor_loop.sh``
do exactly that with Agent-Zero's own Python.

**Standard library only.** This module runs before the pack's dependencies
(pydantic, PyYAML, ...) are installed, so it must not import them, nor any ``org``
module that does. ``org.doctor`` reuses its era detection and clash scan.

How it works: every run first builds a *plan*, a list of :class:`Step` s that each
say what a file or folder is now and what would change. ``--check-only`` prints the
states, ``--dry-run`` prints the changes, a normal run checks that every path it
will touch is writable and then applies them. Because a step that finds its target
already right has nothing to apply, a second run changes nothing.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Sequence

PACKAGE = "a0-org-kernel"
ORGS_REL = Path("usr") / "organizations"
MANIFEST_NAME = ".a0org-manifest.json"
ACTIVE_NAME = "active.json"
NEW_SUFFIX = ".new"
# the identifier rule of org.contracts.common (not imported: it needs pydantic); a test keeps them equal
ORG_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
DEFAULT_A0_ROOT = Path("/a0")

KERNEL = "kernel"
SUPERVISOR = "supervisor loop"
LLM_SUPERVISORS = "LLM supervisors"
COMPONENTS = {"all": "install_all.sh", "supervisor-loop": "install_supervisor_loop.sh",
              "supervisors": "A0ORG_INSTALL_COMPONENT=supervisors install_all.sh"}
#: In the organizations folder: once it exists, install_all.sh installs the LLM supervisors' hooks too.
SUPERVISORS_CONFIG = "supervisors.yaml"

EXIT_OK = 0
EXIT_NOT_CURRENT = 1
EXIT_ERROR = 2


class InstallError(Exception):
    """An expected failure. The message names the path and the reason; no traceback is shown."""


# --------------------------------------------------------------------------- hooks and eras


@dataclass(frozen=True)
class Hook:
    point: str
    name: str
    phase: str

    @property
    def label(self) -> str:
        return f"{self.point}/{self.name}"


HOOKS: tuple[Hook, ...] = (
    Hook("before_main_llm_call", "_12_org_dispatcher.py", KERNEL),
    Hook("tool_execute_after", "_25_org_tool_outcomes.py", KERNEL),
    Hook("message_loop_end", "_50_supervisor_loop.py", SUPERVISOR),
    Hook("tool_execute_before", "_30_org_breaker.py", SUPERVISOR),
    # a unit's steering from its XO (macrocosm); the point exists since Agent-Zero v0.8.5
    Hook("message_loop_prompts_before", "_20_org_inbox.py", SUPERVISOR),
    # the LLM-backed supervisors: off until asked for (--with-supervisors) or configured (supervisors.yaml)
    Hook("monologue_start", "_65_org_supervisors.py", LLM_SUPERVISORS),
    Hook("monologue_end", "_65_org_supervisors.py", LLM_SUPERVISORS),
    Hook("message_loop_prompts_after", "_65_org_knowledge.py", LLM_SUPERVISORS),
)


@dataclass(frozen=True)
class Era:
    """One family of Agent-Zero versions that load extensions the same way."""

    code: str
    versions: str
    hook_dir_pattern: str
    #: folders the loader searches *before* ours: a same-named file there replaces ours
    searched_before: tuple[str, ...]
    #: folders searched *after* ours: ours replaces a same-named file there
    searched_after: tuple[str, ...]
    base_module: str
    awaits_execute: bool
    reloads_changed_files: bool
    survives_image_update: bool

    def hook_dir(self, root: Path, point: str) -> Path:
        return root / self.hook_dir_pattern.format(point=point)


ERA_D = Era(
    code="D",
    versions="v0.9.9.0 and newer, v1.x",
    hook_dir_pattern="usr/extensions/python/{point}",
    # order from helpers/subagents.py::get_paths in v1.7
    searched_before=(
        "usr/projects/*/.a0proj/agents/*/extensions/python/{point}",
        "usr/projects/*/.a0proj/extensions/python/{point}",
        "usr/agents/*/extensions/python/{point}",
        "usr/plugins/*/agents/*/extensions/python/{point}",
        "plugins/*/agents/*/extensions/python/{point}",
        "agents/*/extensions/python/{point}",
    ),
    searched_after=(
        "usr/plugins/*/extensions/python/{point}",
        "plugins/*/extensions/python/{point}",
        "extensions/python/{point}",
    ),
    base_module="helpers.extension",
    awaits_execute=False,
    reloads_changed_files=True,
    survives_image_update=True,
)
ERA_C = Era(
    code="C",
    versions="v0.9.8 to v0.9.8.3",
    hook_dir_pattern="usr/extensions/{point}",
    searched_before=(
        "usr/projects/*/.a0proj/agents/*/extensions/{point}",
        "usr/projects/*/.a0proj/extensions/{point}",
        "usr/agents/*/extensions/{point}",
        "agents/*/extensions/{point}",
    ),
    searched_after=("python/extensions/{point}",),
    base_module="python.helpers.extension",
    awaits_execute=True,
    reloads_changed_files=False,
    survives_image_update=True,
)
ERA_B = Era(
    code="B",
    versions="v0.9.3 to v0.9.7",
    hook_dir_pattern="python/extensions/{point}",
    # agents/<profile>/extensions/<point> files override python/extensions files by name
    searched_before=("agents/*/extensions/{point}",),
    searched_after=(),
    base_module="python.helpers.extension",
    awaits_execute=True,
    reloads_changed_files=False,
    survives_image_update=False,
)
ERAS = (ERA_D, ERA_C, ERA_B)


@dataclass(frozen=True)
class Tree:
    """An Agent-Zero installation as found on disk."""

    root: Path
    era: Era
    version: str
    missing_points: frozenset[str] = frozenset()

    @property
    def organizations(self) -> Path:
        return self.root / ORGS_REL

    def hook_path(self, hook: Hook) -> Path:
        return self.era.hook_dir(self.root, hook.point) / hook.name

    def supports(self, hook: Hook) -> bool:
        return hook.point not in self.missing_points


_CALL_EXTENSIONS_RE = re.compile(r"^(?:async\s+)?def\s+call_extensions\s*\(", re.MULTILINE)


def detect_tree(root: Path) -> Tree:
    """Find the era of the Agent-Zero tree at ``root`` from its files alone."""
    if not root.is_dir():
        raise InstallError(f"{root} is not a folder. Pass --a0-root with Agent-Zero's folder (in the Docker image: /a0).")
    missing = [name for name in ("agent.py", "run_ui.py") if not (root / name).is_file()]
    if missing:
        raise InstallError(
            f"{root} is not an Agent-Zero folder: no {' and no '.join(missing)}. "
            "Pass --a0-root with the folder that holds Agent-Zero's agent.py (in the Docker image: /a0)."
        )
    version = detect_version(root)
    if (root / "helpers" / "extension.py").is_file():
        return Tree(root, ERA_D, version)
    old_module = root / "python" / "helpers" / "extension.py"
    if not old_module.is_file():
        raise InstallError(
            f"{root} has agent.py but neither helpers/extension.py (Agent-Zero v0.9.9+) nor "
            "python/helpers/extension.py (v0.9.3 to v0.9.8.x), so its extension system is unknown. "
            "This pack supports Agent-Zero v0.9.3 and newer."
        )
    if (root / "python" / "helpers" / "subagents.py").is_file():
        return Tree(root, ERA_C, version)
    if _CALL_EXTENSIONS_RE.search(_read_text(old_module)):
        # the tool hooks were added in v0.9.5; v0.9.3 and v0.9.4 never call them
        agent_source = _read_text(root / "agent.py")
        missing_points = frozenset() if "tool_execute_after" in agent_source else frozenset({"tool_execute_after", "tool_execute_before"})
        return Tree(root, ERA_B, version, missing_points)
    raise InstallError(
        f"{old_module} defines no call_extensions function: this is Agent-Zero v0.9.2 or older "
        f"(version: {version}), which this pack does not support. Update Agent-Zero to v0.9.3 or newer."
    )


def detect_version(root: Path) -> str:
    """``git describe --tags`` when the tree is a git checkout and git is installed, else "unknown"."""
    git = shutil.which("git")
    if not (root / ".git").exists() or git is None:
        return "unknown"
    try:
        result = subprocess.run(
            # safe.directory: the tree is often owned by another user than the one installing
            [git, "-c", f"safe.directory={root}", "-C", str(root), "describe", "--tags"],
            capture_output=True, text=True, timeout=20, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    described = result.stdout.strip() if result.returncode == 0 else ""
    return described or "unknown"


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- name clashes


@dataclass(frozen=True)
class Clash:
    """A file with the name of one of our hooks somewhere it changes (or confuses) what runs."""

    hook: Hook
    path: Path
    kind: str  # "replaces ours" | "replaced by ours" | "stale copy"
    ours: Path
    scope: str = ""  # e.g. "for agent profile agent0", from the folder it sits in

    @property
    def hides_ours(self) -> bool:
        return self.kind == "replaces ours"

    def describe(self) -> str:
        if self.kind == "replaces ours":
            return (f"{self.path} has the same name as our hook, so Agent-Zero loads it INSTEAD of "
                    f"{self.ours}{' ' + self.scope if self.scope else ''}.")
        if self.kind == "replaced by ours":
            return (f"{self.path} has the same name as our hook; Agent-Zero loads ours ({self.ours}) instead, "
                    "so that file never runs.")
        return (f"{self.path} is a copy of our hook in a folder this Agent-Zero version does not read "
                "(harmless, but confusing).")

    @property
    def fix(self) -> str:
        if self.kind == "replaces ours":
            return "Remove it if it is an old copy of ours; rename it if it is a different extension."
        if self.kind == "replaced by ours":
            return "Rename it if you need both."
        return "Remove it."

    def message(self) -> str:
        return f"{self.describe()} {self.fix}"


def _scope(root: Path, folder: Path) -> str:
    """Whom a higher-priority folder applies to, read from its path."""
    parts = folder.relative_to(root).parts
    scope = []
    for marker, words in (("projects", "in project"), ("plugins", "through plugin"), ("agents", "for agent profile")):
        if marker in parts and parts.index(marker) + 1 < len(parts):
            scope.append(f"{words} {parts[parts.index(marker) + 1]}")
    return ", ".join(scope)


def find_clashes(tree: Tree, hooks: Iterable[Hook] = HOOKS) -> list[Clash]:
    era = tree.era
    searched = set(era.searched_before) | set(era.searched_after)
    stale_patterns = [e.hook_dir_pattern for e in ERAS if e is not era and e.hook_dir_pattern not in searched]
    clashes: list[Clash] = []
    for hook in hooks:
        ours = tree.hook_path(hook)
        for kind, patterns in (
            ("replaces ours", era.searched_before),
            ("replaced by ours", era.searched_after),
            ("stale copy", stale_patterns),
        ):
            for pattern in patterns:
                for path in sorted(tree.root.glob(pattern.format(point=hook.point) + "/" + hook.name)):
                    if path.is_file() and path != ours:
                        clashes.append(Clash(hook, path, kind, ours, _scope(tree.root, path.parent)))
    return clashes


# --------------------------------------------------------------------------- the pack


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


_MODELINE_SCHEMA_RE = re.compile(r"(yaml-language-server:\s*\$schema=)\S*?(schemas/[A-Za-z0-9_.-]+\.json)")


def rebase_modeline(text: str) -> str:
    """Point a YAML modeline at ``schemas/...`` beside the file.

    Organization templates live in ``roles/organizations/`` in the pack but at the top
    of the organizations folder once installed, so ``../../schemas/x.json`` would point
    nowhere there.
    """
    lines = text.splitlines(keepends=True)
    head = [_MODELINE_SCHEMA_RE.sub(r"\1\2", line) for line in lines[:5]]
    return "".join(head + lines[5:])


@dataclass(frozen=True)
class PackFile:
    """A file the pack puts into the organizations folder, in its installed form."""

    rel: str  # relative to usr/organizations, with "/"
    content: bytes
    user_editable: bool

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.content)


@dataclass(frozen=True)
class Pack:
    root: Path

    def hook_source(self, hook: Hook) -> Path:
        return self.root / "extensions" / hook.point / hook.name

    @property
    def version(self) -> str:
        init = self.root / "org" / "__init__.py"
        match = re.search(r'^__version__\s*=\s*["\']([^"\']+)', _read_text(init), re.M) if init.is_file() else None
        if match:
            return match.group(1)
        from org import __version__  # the installed library, when the pack is its data files

        return __version__

    def organization_files(self) -> list[PackFile]:
        files = [
            PackFile(f"roles/{p.name}", p.read_bytes(), True) for p in sorted((self.root / "roles").glob("*.yaml"))
        ]
        files += [
            PackFile(p.name, rebase_modeline(p.read_text(encoding="utf-8")).encode("utf-8"), True)
            for p in sorted((self.root / "roles" / "organizations").glob("*.yaml"))
        ]
        files += [
            PackFile(f"schemas/{p.name}", p.read_bytes(), False) for p in sorted((self.root / "schemas").glob("*.json"))
        ]
        return files

    def check_complete(self, hooks: Iterable[Hook], need_doctrine: bool) -> None:
        wanted = [self.hook_source(h) for h in hooks]
        if need_doctrine:
            wanted += [self.root / "roles", self.root / "schemas"]
        missing = [str(p) for p in wanted if not p.exists()]
        if missing:
            raise InstallError(f"the pack at {self.root} is incomplete, missing: {', '.join(missing)}. Get the pack again.")


def default_pack_dirs() -> list[Path]:
    """A source checkout (``org/`` beside ``extensions/``), then the installed data files."""
    return [Path(__file__).resolve().parents[1], Path(sys.prefix) / "share" / PACKAGE]


def find_pack_dir(explicit: Path | None = None) -> Path | None:
    if explicit is not None:
        return explicit.resolve()
    for candidate in default_pack_dirs():
        if (candidate / "extensions").is_dir():
            return candidate
    return None


# --------------------------------------------------------------------------- the library


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


# --------------------------------------------------------------------------- plan steps


@dataclass
class Step:
    """One file or folder: what it is now (``state``) and what would change (``change``)."""

    subject: Path | str
    state: str
    change: str = ""
    apply: Callable[[], None] | None = None
    #: the path this step creates, replaces or removes; checked for writability first
    writes: Path | None = None
    note: str = ""
    #: shown by --check-only; False for follow-up steps such as clearing __pycache__
    reported: bool = True

    @property
    def changes(self) -> bool:
        return self.apply is not None


@dataclass
class Phase:
    title: str
    steps: list[Step] = field(default_factory=list)


@dataclass
class Plan:
    phases: list[Phase] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hooks_changed: bool = False

    def steps(self) -> list[Step]:
        return [step for phase in self.phases for step in phase.steps]

    def changes(self) -> list[Step]:
        return [step for step in self.steps() if step.changes]


def write_atomically(path: Path, content: bytes) -> None:
    # A0 v1.x watches extension folders and reloads on change: never let it see half a file.
    # The temporary name does not end in .py, so no loader picks it up.
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.a0org-tmp")
    tmp.write_bytes(content)
    os.replace(tmp, path)


def remove_file(path: Path) -> None:
    path.unlink(missing_ok=True)


def folder_step(path: Path) -> Step | None:
    if path.is_dir():
        return None
    return Step(path, "missing", "create folder", lambda: path.mkdir(parents=True, exist_ok=True), writes=path)


def file_step(path: Path, content: bytes, what: str) -> Step:
    """Install or replace a file the pack owns outright (hooks, schemas)."""
    current = sha256_file(path)
    if current == sha256_bytes(content):
        return Step(path, "current", note=what)
    state, change = ("missing", "install") if current is None else ("outdated", "update")
    return Step(path, state, change, lambda: write_atomically(path, content), writes=path, note=what)


def hook_steps(tree: Tree, pack: Pack, hooks: Sequence[Hook], plan: Plan) -> list[Step]:
    steps: list[Step] = []
    changed_dirs: list[Path] = []
    for hook in hooks:
        if not tree.supports(hook):
            plan.warnings.append(
                f"skipped {hook.label}: this Agent-Zero ({tree.version}) has no {hook.point} extension point "
                "(added in v0.9.5); update Agent-Zero and run the installer again to get it."
            )
            continue
        step = file_step(tree.hook_path(hook), pack.hook_source(hook).read_bytes(), f"{hook.phase} hook")
        steps.append(step)
        if step.changes:
            changed_dirs.append(tree.hook_path(hook).parent)
    for folder in dict.fromkeys(changed_dirs):
        steps.extend(pycache_steps(folder))
    plan.hooks_changed = plan.hooks_changed or bool(changed_dirs)
    return steps


def pycache_steps(folder: Path) -> list[Step]:
    # Not needed for correctness (.pyc files are checked against the source's mtime and size),
    # but a copy that keeps an old mtime and the same size would run stale bytecode.
    cache = folder / "__pycache__"
    if not cache.is_dir():
        return []
    return [Step(cache, "stale", "clear", lambda: shutil.rmtree(cache), writes=cache, reported=False)]


# --------------------------------------------------------------------------- organizations folder


def read_manifest(orgs: Path) -> dict[str, str]:
    path = orgs / MANIFEST_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        return {str(k): str(v) for k, v in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InstallError(
            f"{path} is unreadable ({exc}); it records which files you edited, so it must not be guessed. "
            "Fix or delete it (deleting makes every existing doctrine file count as yours)."
        ) from None


def manifest_bytes(files: dict[str, str], version: str) -> bytes:
    data = {"schema_version": 1, "package": PACKAGE, "pack_version": version, "files": dict(sorted(files.items()))}
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


def doctrine_steps(orgs: Path, pack_files: list[PackFile], manifest: dict[str, str]) -> tuple[list[Step], dict[str, str]]:
    """Steps for roles, organization templates and schemas, and the manifest that results.

    A role or template is replaced only while it is exactly what we installed; an edited
    one (or one we never installed) is kept and the pack's version goes beside it as ``.new``.
    """
    steps: list[Step] = []
    new_manifest = dict(manifest)
    for item in pack_files:
        path = orgs / item.rel
        current = sha256_file(path)
        recorded = manifest.get(item.rel)
        ours_untouched = current is None or current == recorded or current == item.sha256
        if ours_untouched or not item.user_editable:
            note = "schema" if not item.user_editable else ("role" if item.rel.startswith("roles/") else "organization template")
            if current is not None and recorded is not None and current != recorded and not item.user_editable:
                note += "; it had local changes, which are replaced (schemas are the pack's)"
            steps.append(file_step(path, item.content, note))
            new_manifest[item.rel] = item.sha256
            steps.extend(_drop_redundant_new(path, item))
            continue
        why = "edited by you" if recorded is not None else "not installed by this pack"
        steps.append(Step(path, why, note="kept as it is"))
        new_path = path.with_name(path.name + NEW_SUFFIX)
        if sha256_file(new_path) == item.sha256:
            steps.append(Step(new_path, "current", note="the pack's version, to compare with yours"))
        else:
            state = "missing" if not new_path.exists() else "outdated"
            steps.append(Step(
                new_path, state, "write", lambda p=new_path, c=item.content: write_atomically(p, c), writes=new_path,
                note=f"kept your {path.name}; merge what you need, then delete the .new file",
            ))
    return steps, new_manifest


def _drop_redundant_new(path: Path, item: PackFile) -> list[Step]:
    # A .new beside a file that now equals the pack's version says nothing: remove it.
    new_path = path.with_name(path.name + NEW_SUFFIX)
    if sha256_file(new_path) == item.sha256:
        return [Step(new_path, "redundant", "remove", lambda: remove_file(new_path), writes=new_path)]
    return []


def manifest_step(orgs: Path, files: dict[str, str], version: str) -> Step:
    return file_step(orgs / MANIFEST_NAME, manifest_bytes(files, version), "which files the pack installed (sha256)")


_ORG_ID_LINE_RE = re.compile(r"^org_id:\s*[\"']?([A-Za-z0-9_-]+)[\"']?\s*(?:#.*)?$", re.MULTILINE)


def declared_org_id(text: str) -> str | None:
    match = _ORG_ID_LINE_RE.search(text)
    return match.group(1) if match else None


def activation_step(orgs: Path, org_id: str, pack_files: list[PackFile]) -> Step:
    if not ORG_ID_RE.match(org_id):
        raise InstallError(
            f"--activate {org_id!r}: not a valid organization id "
            "(lower-case letters, digits, '_' and '-', at most 64, starting with a letter or digit)."
        )
    template = orgs / f"{org_id}.yaml"
    shipped = {item.rel: item for item in pack_files}
    if template.is_file():
        text = _read_text(template)
    elif f"{org_id}.yaml" in shipped:
        text = shipped[f"{org_id}.yaml"].content.decode("utf-8")
    else:
        installed = {p.stem for p in orgs.glob("*.yaml") if declared_org_id(_read_text(p)) == p.stem}
        templates = {rel[: -len(".yaml")] for rel, item in shipped.items()
                     if "/" not in rel and declared_org_id(item.content.decode("utf-8")) == rel[: -len(".yaml")]}
        known = sorted(installed | templates)
        raise InstallError(
            f"--activate {org_id}: there is no organization template {template}. "
            f"Installed templates: {', '.join(known) or 'none'}."
        )
    declared = declared_org_id(text)
    if declared != org_id:
        raise InstallError(
            f"--activate {org_id}: {template} is not an organization template for '{org_id}' (its org_id is {declared!r})."
        )
    active = orgs / ACTIVE_NAME
    if _active_org_id(active) == org_id:
        return Step(active, "current", note=f"organization {org_id} is active")
    record = {
        "schema_version": 1,
        "org_id": org_id,
        "activated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "activated_by": "install_all.sh",
    }
    content = (json.dumps(record, indent=2) + "\n").encode("utf-8")
    state = "missing" if not active.exists() else "other organization active"
    return Step(active, state, "write", lambda: write_atomically(active, content), writes=active, note=f"activates {org_id}")


def deactivation_step(orgs: Path) -> Step:
    active = orgs / ACTIVE_NAME
    if not active.exists():
        return Step(active, "current", note="no organization is active")
    state = f"active ({_active_org_id(active) or 'unreadable'})"
    return Step(active, state, "remove (deactivate)", lambda: remove_file(active), writes=active)


def _active_org_id(active: Path) -> str | None:
    try:
        value = json.loads(active.read_text(encoding="utf-8")).get("org_id")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- plans


@dataclass
class Options:
    component: str
    a0_root: Path
    pack_dir: Path | None = None
    python: str = sys.executable
    library: bool = True
    mode: str = "install"  # install | check | uninstall
    dry_run: bool = False
    activate: str | None = None
    deactivate: bool = False
    #: also the LLM supervisors' phase (component "all"); see wants_supervisors
    supervisors: bool = False


def hooks_of(component: str, supervisors: bool = False) -> list[Hook]:
    """The hooks a component installs; with "all", the LLM supervisors' only when ``supervisors``."""
    phases = {"all": {KERNEL, SUPERVISOR} | ({LLM_SUPERVISORS} if supervisors else set()),
              "supervisor-loop": {SUPERVISOR}, "supervisors": {LLM_SUPERVISORS}}[component]
    return [h for h in HOOKS if h.phase in phases]


def wants_supervisors(tree: Tree, options: Options) -> bool:
    """install_all.sh takes the LLM supervisors' phase along when asked (--with-supervisors), once a
    model is configured (supervisors.yaml exists), when their hooks are installed already (to keep
    them current), and always when uninstalling."""
    if options.component != "all":
        return options.component == "supervisors"
    return options.supervisors or options.mode == "uninstall" or supervisors_in_use(tree)


def supervisors_in_use(tree: Tree) -> bool:
    """A model is configured for the LLM supervisors, or one of their hooks is installed."""
    installed = any(tree.hook_path(h).exists() for h in HOOKS if h.phase == LLM_SUPERVISORS)
    return installed or (tree.organizations / SUPERVISORS_CONFIG).is_file()


def library_subject(python: str) -> str:
    return f"library {PACKAGE} ({python})"


def library_step(options: Options, pack: Pack, plan: Plan) -> Step:
    status = library_status(options.python, pack)
    if status.state == "current":
        plan.warnings += library_warnings(status, options.python)
        return Step(library_subject(options.python), "current", note=status.detail)
    install = lambda: _run_pip(options.python, "install", "--upgrade", str(pack.root))  # noqa: E731
    return Step(library_subject(options.python), status.state, "pip install", install, note=status.detail)


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


def install_plan(tree: Tree, pack: Pack, options: Options) -> Plan:
    plan = Plan()
    hooks = hooks_of(options.component, options.supervisors)
    if options.component == "all":
        plan.phases.append(kernel_phase(tree, pack, options, plan))
    supervisor = Phase("Phase 2: supervisor loop" if options.component == "all" else "Supervisor loop")
    if options.component != "all" or not options.library:
        # not installing the library here, so at least say whether the hooks will find it
        plan.warnings += library_warnings(library_status(options.python, pack), options.python)
    if options.component != "supervisors":
        supervisor.steps = hook_steps(tree, pack, [h for h in hooks if h.phase == SUPERVISOR], plan)
        plan.phases.append(supervisor)
    if options.component != "supervisor-loop":
        plan.phases.append(llm_supervisors_phase(tree, pack, options, plan))
    plan.warnings.extend(era_warnings(tree))
    plan.warnings.extend(c.message() for c in find_clashes(tree, hooks))
    return plan


def llm_supervisors_phase(tree: Tree, pack: Pack, options: Options, plan: Plan) -> Phase:
    phase = Phase("Phase 3: LLM supervisors" if options.component == "all" else "LLM supervisors")
    hooks = [h for h in HOOKS if h.phase == LLM_SUPERVISORS]
    config = tree.organizations / SUPERVISORS_CONFIG
    if not options.supervisors:
        phase.steps.append(Step(", ".join(h.label for h in hooks), "off",
                                note=f"installed with --with-supervisors, or once {config} configures a model"))
        return phase
    phase.steps = hook_steps(tree, pack, hooks, plan)
    if not config.is_file() and options.mode != "uninstall":
        plan.warnings.append(f"the LLM supervisors do nothing until {config} configures a model "
                             "(see docs/supervisors-llm.md in the pack).")
    return phase


def kernel_phase(tree: Tree, pack: Pack, options: Options, plan: Plan) -> Phase:
    phase = Phase("Phase 1: kernel")
    if options.library and (pack.root / "pyproject.toml").is_file():
        phase.steps.append(library_step(options, pack, plan))
    elif options.library:
        # the pack is the installed library's data files (share/a0-org-kernel): nothing to pip install from
        plan.warnings.append(f"{pack.root} has no pyproject.toml, so the library is not installed from it.")
        plan.warnings += library_warnings(library_status(options.python, pack), options.python)
    phase.steps += hook_steps(tree, pack, [h for h in HOOKS if h.phase == KERNEL], plan)
    orgs = tree.organizations
    for folder in (orgs, orgs / "roles", orgs / "schemas", orgs / "reports", orgs / "reports" / "archive"):
        step = folder_step(folder)
        if step:
            phase.steps.append(step)
    pack_files = pack.organization_files()
    steps, files = doctrine_steps(orgs, pack_files, read_manifest(orgs))
    phase.steps += steps
    phase.steps.append(manifest_step(orgs, files, pack.version))
    if options.activate:
        phase.steps.append(activation_step(orgs, options.activate, pack_files))
    if options.deactivate:
        phase.steps.append(deactivation_step(orgs))
    return phase


def era_warnings(tree: Tree) -> list[str]:
    if tree.era.survives_image_update:
        return []
    return [
        f"Agent-Zero {tree.era.versions} only reads extensions from {tree.era.hook_dir_pattern.format(point='<point>')}, "
        "inside the image: updating or recreating the container loses the hooks. Run this installer again after every update."
    ]


def uninstall_plan(tree: Tree, pack: Pack | None, options: Options) -> Plan:
    plan = Plan()
    hooks = hooks_of(options.component, options.supervisors)
    phase = Phase("Uninstall: " + {"all": "kernel, supervisor loop and LLM supervisors", "supervisor-loop": "supervisor loop",
                                   "supervisors": "LLM supervisors"}[options.component])
    removed_dirs: list[Path] = []
    for hook in hooks:
        path = tree.hook_path(hook)
        if path.exists():
            phase.steps.append(Step(path, "installed", "remove", lambda p=path: remove_file(p), writes=path))
            removed_dirs.append(path.parent)
        else:
            phase.steps.append(Step(path, "not installed"))
    for folder in dict.fromkeys(removed_dirs):
        phase.steps += pycache_steps(folder)
    plan.hooks_changed = bool(removed_dirs)
    if options.component == "all":
        phase.steps += organization_removal_steps(tree.organizations, pack, plan)
        if options.library:
            phase.steps.append(library_removal_step(options))
    plan.phases.append(phase)
    plan.warnings.extend(c.message() for c in find_clashes(tree, hooks) if c.kind in ("replaces ours", "stale copy"))
    return plan


def organization_removal_steps(orgs: Path, pack: Pack | None, plan: Plan) -> list[Step]:
    """Remove what we installed and the user left alone; keep edits and reports, and say so."""
    steps: list[Step] = []
    if not orgs.is_dir():
        return steps
    manifest = read_manifest(orgs)
    shipped = {item.rel: item.sha256 for item in pack.organization_files()} if pack else {}
    for rel in sorted(set(manifest) | set(shipped)):
        path = orgs / rel
        current = sha256_file(path)
        if current is None:
            continue
        if current in (manifest.get(rel), shipped.get(rel)):
            steps.append(Step(path, "installed by the pack", "remove", lambda p=path: remove_file(p), writes=path))
        else:
            steps.append(Step(path, "edited by you", note="kept"))
            plan.warnings.append(
                f"kept {path}: you edited it (or it was not installed by this pack). Delete it yourself if you no longer need it."
            )
        new_path = path.with_name(path.name + NEW_SUFFIX)
        if new_path.exists() and sha256_file(new_path) == shipped.get(rel):
            steps.append(Step(new_path, "the pack's version", "remove", lambda p=new_path: remove_file(p), writes=new_path))
    active = orgs / ACTIVE_NAME
    if active.exists():
        steps.append(Step(active, "active", "remove (deactivate)", lambda: remove_file(active), writes=active))
    manifest_path = orgs / MANIFEST_NAME
    if manifest_path.exists():
        steps.append(Step(manifest_path, "installed", "remove", lambda: remove_file(manifest_path), writes=manifest_path))
    reports = [p for p in (orgs / "reports").rglob("*") if p.is_file()] if (orgs / "reports").is_dir() else []
    if reports:
        plan.warnings.append(f"kept {len(reports)} report file(s) in {orgs / 'reports'}: they are your data.")
    # folders we created go too, once nothing else is left in them (deepest first)
    removing = {step.writes for step in steps if step.changes}
    for folder in (orgs / "reports" / "archive", orgs / "reports", orgs / "roles", orgs / "schemas", orgs):
        if folder.is_dir() and all(child in removing for child in folder.iterdir()):
            steps.append(Step(folder, "empty folder", "remove", lambda f=folder: f.rmdir(), writes=folder))
            removing.add(folder)
    return steps


def library_removal_step(options: Options) -> Step:
    subject = f"library {PACKAGE} in {options.python}"
    if "dist_version" not in probe_library(options.python):
        return Step(subject, "not installed")
    return Step(subject, "installed", "pip uninstall -y", lambda: _run_pip(options.python, "uninstall", "-y", PACKAGE))


# --------------------------------------------------------------------------- running a plan


def unwritable_reason(path: Path) -> str | None:
    """Why ``path`` cannot be created, replaced or removed; None when it can."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"no permission to write in {folder}"
    return None


def preflight(plan: Plan, root: Path) -> None:
    """Refuse before changing anything, rather than leave a half-installed tree."""
    for step in plan.changes():
        if step.writes is None:
            continue
        reason = unwritable_reason(step.writes)
        if reason:
            raise InstallError(
                f"cannot write {step.writes}: {reason}. "
                f"Check --a0-root ({root}) and that you run as a user who may write there."
            )


class Printer:
    def __init__(self, options: Options):
        self.options = options
        self.root = options.a0_root

    def step(self, step: Step) -> None:
        if self.options.mode == "check":
            if step.reported:
                self.line(step.state, step.subject, step.note)
        elif step.changes:
            self.line(("would " if self.options.dry_run else "") + step.change, step.subject, step.note)
        else:
            self.line(step.state, step.subject, step.note)

    def line(self, label: str, subject: Path | str, note: str = "") -> None:
        # paths inside Agent-Zero are shown relative to it; the header names the root
        if isinstance(subject, Path) and self.root in subject.parents:
            subject = subject.relative_to(self.root).as_posix()
        print(f"  {label:<20} {subject}" + (f"  ({note})" if note else ""), flush=True)


def execute(plan: Plan, options: Options, tree: Tree) -> int:
    printer = Printer(options)
    changing = options.mode != "check"
    if changing:
        # a dry run fails the same way the real run would
        preflight(plan, tree.root)
    for phase in plan.phases:
        print(f"\n== {phase.title} ==")
        for step in phase.steps:
            printer.step(step)
            if step.changes and changing and not options.dry_run:
                _apply(step)
    if plan.warnings:
        print("\n== Warnings ==")
        for warning in dict.fromkeys(plan.warnings):
            print(f"  warning: {warning}")
    return summarize(plan, options, tree)


def _apply(step: Step) -> None:
    assert step.apply is not None
    try:
        step.apply()
    except OSError as exc:
        target = exc.filename or step.writes or step.subject
        raise InstallError(f"{step.change} {step.subject} failed: {target}: {exc.strerror or exc}.") from None


def summarize(plan: Plan, options: Options, tree: Tree) -> int:
    pending = [s for s in plan.changes() if s.reported]
    print()
    if options.mode == "check":
        if pending:
            print(f"Check: {len(pending)} item(s) missing or outdated. Run {COMPONENTS[options.component]} to install them.")
            return EXIT_NOT_CURRENT
        print("Check: everything is installed and current.")
        return EXIT_OK
    if options.dry_run:
        print(f"Dry run: {len(plan.changes())} change(s) would be made; nothing was changed.")
        return EXIT_OK
    if not plan.changes():
        done = "installed and current." if options.mode == "install" else "removed."
        print(f"Nothing to change: everything is already {done}")
        return EXIT_OK
    print(f"Done: {len(plan.changes())} change(s).")
    if plan.hooks_changed and not tree.era.reloads_changed_files:
        print("Restart Agent-Zero (`supervisorctl restart run_ui` in the container, or restart the container): "
              f"Agent-Zero {tree.era.versions} loads extensions once and keeps them until it restarts.")
    return EXIT_OK


# --------------------------------------------------------------------------- command line


def parse_args(argv: Sequence[str]) -> Options:
    if not argv or argv[0] not in COMPONENTS:
        got = argv[0] if argv else "nothing"
        raise InstallError(f"usage: python -m org.install {{{','.join(COMPONENTS)}}} [options]; got {got!r}")
    component = argv[0]
    parser = argparse.ArgumentParser(
        prog=COMPONENTS[component],
        description={
            "all": "Install the organization kernel (library, dispatcher and tool-outcome hooks, roles, schemas, "
                   "organization templates) and the supervisor loop into Agent-Zero; the LLM supervisors too with "
                   "--with-supervisors or once supervisors.yaml configures a model.",
            "supervisor-loop": "Install only the supervisor-loop hooks (radio check, and a unit's steering inbox) into Agent-Zero.",
            "supervisors": "Install only the LLM supervisors' hooks (task start and end, prompt sections) into Agent-Zero.",
        }[component],
    )
    parser.add_argument("--a0-root", type=Path, default=DEFAULT_A0_ROOT, metavar="DIR", help="Agent-Zero's folder (default: /a0)")
    parser.add_argument(
        "--python", metavar="PATH",
        help="Agent-Zero's Python; the wrapper script runs the installer with it "
             "(default /opt/venv-a0/bin/python, else /opt/venv/bin/python)",
    )
    parser.add_argument("--pack-dir", type=Path, metavar="DIR",
                        help="the pack to install from (default: the folder this installer is in)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--check-only", action="store_true",
                       help="report what is installed, missing, outdated or edited; exit 1 unless all is current")
    modes.add_argument("--uninstall", action="store_true",
                       help="remove what the pack installed, keeping files you edited and reports")
    parser.add_argument("--dry-run", action="store_true", help="print every action without changing anything")
    if component == "all":
        parser.add_argument("--no-library", action="store_true", help=f"do not pip install (or uninstall) the {PACKAGE} library")
        switch = parser.add_mutually_exclusive_group()
        switch.add_argument("--activate", metavar="ORG_ID",
                            help="make ORG_ID (an installed organization template) the active organization")
        switch.add_argument("--deactivate", action="store_true", help="remove active.json, switching the organization kernel off")
        parser.add_argument("--with-supervisors", action="store_true",
                            help="also install the LLM supervisors' hooks (phase 3; docs/supervisors-llm.md). Without it "
                                 "they are installed only once supervisors.yaml exists or when they are installed already")
    args = parser.parse_args(list(argv[1:]))
    if args.python and os.path.abspath(args.python) != os.path.abspath(sys.executable):
        raise InstallError(
            f"--python {args.python}: run the installer with that Python (the wrapper scripts do), not {sys.executable}."
        )
    if args.dry_run and args.check_only:
        parser.error("--dry-run and --check-only cannot be combined")
    if getattr(args, "activate", None) and args.uninstall:
        parser.error("--activate and --uninstall cannot be combined")
    mode = "check" if args.check_only else "uninstall" if args.uninstall else "install"
    return Options(
        component=component,
        a0_root=args.a0_root.expanduser().absolute(),
        pack_dir=args.pack_dir,
        library=not getattr(args, "no_library", False),
        activate=getattr(args, "activate", None),
        deactivate=getattr(args, "deactivate", False),
        mode=mode,
        dry_run=args.dry_run,
        supervisors=getattr(args, "with_supervisors", False),
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        options = parse_args(argv)
        return run(options)
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def run(options: Options) -> int:
    tree = detect_tree(options.a0_root)
    pack_dir = find_pack_dir(options.pack_dir)
    uninstalling = options.mode == "uninstall"
    if pack_dir is None and not uninstalling:
        raise InstallError(f"cannot find the pack (looked in {', '.join(map(str, default_pack_dirs()))}); pass --pack-dir.")
    # uninstalling works from the manifest alone when the pack is gone
    pack = Pack(pack_dir) if pack_dir else None
    options.supervisors = wants_supervisors(tree, options)
    if pack and not uninstalling:
        pack.check_complete(hooks_of(options.component, options.supervisors), need_doctrine=options.component == "all")
    print_header(tree, pack, options)
    plan = uninstall_plan(tree, pack, options) if uninstalling else install_plan(tree, pack, options)  # type: ignore[arg-type]
    return execute(plan, options, tree)


def print_header(tree: Tree, pack: Pack | None, options: Options) -> None:
    mode = {"install": "install", "check": "check only (nothing is changed)", "uninstall": "uninstall"}[options.mode]
    if options.dry_run:
        mode += ", dry run (nothing is changed)"
    print(f"{PACKAGE} {COMPONENTS[options.component]}: {mode}")
    print(f"  Agent-Zero:  {tree.root} (era {tree.era.code}: {tree.era.versions}; version {tree.version})")
    print(f"  hooks go to: {tree.era.hook_dir(tree.root, '<point>')}/")
    print(f"  pack:        {pack.root if pack else 'not found (uninstalling from the manifest)'}")
    print(f"  python:      {options.python}")


if __name__ == "__main__":
    sys.exit(main())
