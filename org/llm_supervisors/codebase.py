"""The bootstrap scan: what a code style or design supervisor sees of the code base on its first run.

A review run sees the files the recent tasks touched. A bootstrap run is asked to write
down the conventions and the architecture as they are, which a handful of touched files
cannot show; so it is also given the project's layout and a sample of its files:

* the project root: from each touched file, the nearest folder up that holds a project
  marker (``.git``, ``pyproject.toml``, ``package.json``, ...), else the file's folder;
* the layout: up to :data:`MAX_LISTED` paths under it, breadth first, skipping VCS,
  dependency, build and cache folders;
* a sample: the README and manifests first, then source files of the most common kinds,
  one per folder in turn, within :data:`SAMPLE_CHARS`.

Every file goes through the same refusal as touched files (credential files, binaries,
the pack's own files) and is redacted before it is cut.
"""

from __future__ import annotations

import os
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

from org.contracts.supervisor_outputs import TaskDigest
from org.kernel.redact import redact

MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod", "Cargo.toml", "pom.xml",
           "build.gradle", "composer.json", "Gemfile", "CMakeLists.txt", "Makefile")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", "env", ".env", "dist", "build",
                       "target", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".idea", ".vscode", "site-packages",
                       ".next", "coverage", ".cache", "vendor"})
SOURCE = frozenset({".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp",
                    ".rb", ".php", ".cs", ".swift", ".scala", ".sh", ".sql"})
FIRST = ("README.md", "README.rst", "README.txt", "README", "pyproject.toml", "package.json", "go.mod", "Cargo.toml",
         "setup.cfg", "pom.xml", "build.gradle")
#: Paths listed in the layout, and directory entries looked at in all (a huge tree is not walked whole).
MAX_LISTED, MAX_VISITED = 200, 20_000
#: Top-level folders whose trees are the system's, not a project's.
SYSTEM_TOP = frozenset({"proc", "sys", "dev", "etc", "usr", "bin", "sbin", "lib", "lib64", "boot", "run"})
#: How far up from a touched file a project marker is looked for.
MAX_UP = 6
MAX_ROOTS = 2
SAMPLE_FILES, SAMPLE_FILE_CHARS, SAMPLE_CHARS = 10, 2500, 18_000


@dataclass
class CodeBase:
    """The scan's result: the layout text and the sampled files (name, redacted text)."""

    layout: str = ""
    files: list[tuple[str, str]] = field(default_factory=list)


def project_roots(digests: list[TaskDigest], skip_under: tuple[Path, ...] = ()) -> list[Path]:
    """The projects the recent tasks worked in, newest first."""
    roots: dict[Path, None] = {}
    for digest in reversed(digests):
        for name in digest.files_touched:
            try:
                path = Path(name).resolve()
                start = path if path.is_dir() else path.parent
                if not start.is_dir() or _under(start, skip_under):
                    continue
            except OSError:
                continue
            root = _root_of(start, skip_under)
            if root is not None:
                roots.setdefault(root, None)
            if len(roots) >= MAX_ROOTS:
                return list(roots)
    return list(roots)


def _root_of(folder: Path, skip_under: tuple[Path, ...]) -> Path | None:
    """The nearest folder up with a project marker, else ``folder``; never one that holds the pack's own
    files (that is Agent-Zero's tree, not the project) nor a system folder."""
    for candidate in [folder, *folder.parents][:MAX_UP]:
        if _holds(candidate, skip_under):
            break
        if any((candidate / marker).exists() for marker in MARKERS):
            return candidate if _project_like(candidate) else None
    return folder if _project_like(folder) and not _holds(folder, skip_under) else None


def _holds(folder: Path, bases: tuple[Path, ...]) -> bool:
    return any(folder == base or folder in base.parents for base in bases)


def _project_like(folder: Path) -> bool:
    """Not the file system's root, a top-level folder (``/tmp``, ``/etc``) or a system tree."""
    return len(folder.parts) > 2 and folder.parts[1] not in SYSTEM_TOP


def _under(path: Path, bases: tuple[Path, ...]) -> bool:
    return any(base == path or base in path.parents for base in bases)


def walk(root: Path, skip_under: tuple[Path, ...] = ()) -> list[Path]:
    """Files under ``root``, breadth first, bounded; skipped folders are never entered."""
    found: list[Path] = []
    queue: deque[Path] = deque([root])
    visited = 0
    while queue and visited < MAX_VISITED:
        folder = queue.popleft()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            visited += 1
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS and not entry.name.startswith(".") and not _under(path, skip_under):
                        queue.append(path)
                elif entry.is_file(follow_symlinks=False):
                    found.append(path)
            except OSError:
                continue
    return found


def sample_order(root: Path, files: list[Path]) -> list[Path]:
    """README and manifests first, then source files of the commonest kinds, one folder at a time."""
    first = [root / name for name in FIRST if root / name in set(files)]
    kinds = Counter(p.suffix for p in files if p.suffix in SOURCE)
    common = {kind for kind, _ in kinds.most_common(3)}
    by_folder: dict[Path, deque[Path]] = {}
    for path in files:
        if path.suffix in common and path.name != "__init__.py":
            by_folder.setdefault(path.parent, deque()).append(path)
    rest: list[Path] = []
    while by_folder:
        for folder in list(by_folder):
            rest.append(by_folder[folder].popleft())
            if not by_folder[folder]:
                del by_folder[folder]
    return first + rest


def scan(digests: list[TaskDigest], readable, skip_under: tuple[Path, ...] = (), already: set[str] | None = None) -> CodeBase:
    """The layout and sample of the projects the tasks worked in; ``readable(path)`` refuses or reads a file."""
    result = CodeBase()
    layouts, used = [], 0
    seen = set(already or ())
    for root in project_roots(digests, skip_under):
        files = walk(root, skip_under)
        listed = [p.relative_to(root).as_posix() for p in files[:MAX_LISTED]]
        more = f"\n... and {len(files) - MAX_LISTED} more files" if len(files) > MAX_LISTED else ""
        layouts.append(f"{root}/ ({len(files)} files)\n" + "\n".join(listed) + more)
        for path in sample_order(root, files):
            if len(result.files) >= SAMPLE_FILES or used >= SAMPLE_CHARS:
                break
            if str(path) in seen:
                continue
            text = readable(path)
            if text is None:
                continue
            text = redact(text)[: min(SAMPLE_FILE_CHARS, SAMPLE_CHARS - used)]
            seen.add(str(path))
            result.files.append((str(path), text))
            used += len(text)
    result.layout = redact("\n\n".join(layouts))
    return result


__all__ = ["CodeBase", "project_roots", "sample_order", "scan", "walk"]
