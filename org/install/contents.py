"""What the pack installs: its hooks (by component) and its doctrine files, and where the pack is."""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from org.install import InstallError

PACKAGE = "a0-org-kernel"

KERNEL = "kernel"
SUPERVISOR = "supervisor loop"
LLM_SUPERVISORS = "LLM supervisors"
COMPONENTS = {"all": "install_all.sh", "supervisor-loop": "install_supervisor_loop.sh",
              "supervisors": "A0ORG_INSTALL_COMPONENT=supervisors install_all.sh"}


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


def hooks_of(component: str, supervisors: bool = False) -> list[Hook]:
    """The hooks a component installs; with "all", the LLM supervisors' only when ``supervisors``."""
    phases = {"all": {KERNEL, SUPERVISOR} | ({LLM_SUPERVISORS} if supervisors else set()),
              "supervisor-loop": {SUPERVISOR}, "supervisors": {LLM_SUPERVISORS}}[component]
    return [h for h in HOOKS if h.phase in phases]


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None


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
        match = re.search(r'^__version__\s*=\s*["\']([^"\']+)', read_text(init), re.M) if init.is_file() else None
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
    return [Path(__file__).resolve().parents[2], Path(sys.prefix) / "share" / PACKAGE]


def find_pack_dir(explicit: Path | None = None) -> Path | None:
    if explicit is not None:
        return explicit.resolve()
    for candidate in default_pack_dirs():
        if (candidate / "extensions").is_dir():
            return candidate
    return None


