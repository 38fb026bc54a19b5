"""Real Agent-Zero saved chats from public backups on GitHub, read with the pack's own chat reader.

RAW holds ``<owner>+<name>/<path in the repository>`` for each chat file; ``--extract-from
MIRRORS`` first fills it from the bare git repositories ``MIRRORS/<owner>+<name>/repo`` at the
commits in ``REPOS``. OUT is the source folder, which receives one run folder per repository:
``<chat id>.jsonl`` for the agent the user talks to, ``<chat id>__A<n>.jsonl`` for its
subordinate n, and ``labels.json`` (all null: users' own tasks have no success measure).

Decisions (why):

* Every path that ever held a ``chat.json`` in the commit's history, at the last commit that
  added or changed it: the backups delete chats and rewrite the scheduled-task chats at each
  commit, and a chat deleted later is still a real session, its last version its longest.
* Paths are listed with a pathspec and ``--no-renames``: a plain ``git log --name-only`` stops
  at a commit holding a blob the snapshot lacks (files over 4 MiB) and misses chats.
* ``…_bloated_backup/chat.json`` is left out: a copy of another chat with the same saved id.
* The pack's reader (``org.a0.saved_chats``), so the traces are the turns ``a0org replay``
  replays: a turn per model reply, tool and arguments from its JSON, the user's message as
  ``user``, the tool result as ``output``, the raw reply as ``response`` (Agent-Zero's own
  repeat check fires where it fired), an agent whose history lost turns to summaries read from
  the UI log when the log holds more.
* ``chat_files`` is called per chats folder (the parent of each ``<id>/chat.json``): on a
  repository keeping chats in two places (``tmp/chats`` and ``Agent/tmp/chats``) it would
  otherwise read only the first.
* Sessions are named by the id saved in each chat (what Agent-Zero and the pack's events call
  it); an agent with no turns (saved before it replied, or a greeting only) is not a session.
* No ``exit_code`` (Agent-Zero records none) and no ``thought`` (it is inside ``response``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from org.a0.saved_chats import chat_files, read_chat
from org.contracts import TraceTurn

from .traces import write_labels, write_session

RAW_HELP = "the chat files: <owner>+<name>/<path in the repository>"
OUT_HELP = "the source folder: one run folder per repository is written in it"

#: repository (as the mirrors name it) -> the commit whose history is read
REPOS = {
    "MichaelBui+AgentZero": "7d2cb4ed959f87bf9147c4486dac8e37a2bc277a",
    "nelohenriq+agent-zero-backup": "9312c9110dbf7e5c2d3fbca91f01bc94e96442f4",
    "Z2ZATL+GPAF": "00e5f4a65032171b87c2946b094f247da0fd296e",
    "BlazeGlitchz2+cryonex-appv2": "0df6c2f77a86d4a0bf87753efbb11ed4a396a301",
}
LEFT_OUT = ("_bloated_backup/",)


def add_options(parser: argparse.ArgumentParser) -> None:
    """RAW can be filled from the git histories first: the chats are in the commits, not in one checkout."""
    parser.add_argument("--extract-from", type=Path, metavar="MIRRORS",
                        help="first take the chat files into RAW from the bare repositories MIRRORS/<owner>+<name>/repo")


def git(git_dir: Path, *args: str) -> bytes:
    """A read-only git command on a bare repository."""
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True).stdout


def extract(mirrors: Path, raw: Path, repos: Mapping[str, str] = REPOS) -> None:
    """Write the last committed version of every chat file in each repository's history (read-only git)."""
    for repo, commit in sorted(repos.items()):
        git_dir = mirrors / repo / "repo"
        names = git(git_dir, "log", commit, "--no-renames", "--format=", "--name-only", "--", "*chat.json").decode()
        paths = sorted({p for p in names.splitlines() if p.endswith("/chat.json")})
        kept = [p for p in paths if not any(mark in p for mark in LEFT_OUT)]
        for path in kept:
            last = git(git_dir, "log", commit, "-1", "--no-renames", "--diff-filter=AM", "--format=%H", "--", path).decode().strip()
            target = raw / repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(git(git_dir, "show", f"{last}:{path}"))
        print(f"{repo} at {commit[:8]}: {len(kept)} chat files ({len(paths) - len(kept)} left out)", file=sys.stderr)


def sessions_of(repo: Path) -> tuple[int, int, dict[str, list[TraceTurn]]]:
    """(chat files, agents without turns, turns by session name) of one repository's chats."""
    folders = sorted({path.parent.parent for path in repo.rglob("chat.json")})
    files = [f for folder in folders for f in chat_files(folder)]
    empty = 0
    sessions: dict[str, list[TraceTurn]] = {}
    for path in files:
        chat = read_chat(path)
        for agent in chat.agents:
            if not agent.turns:
                empty += 1
                continue
            name = chat.id if agent.number == 0 else f"{chat.id}__A{agent.number}"
            if name in sessions:
                raise SystemExit(f"{path}: session {name} is already taken by another chat file")
            sessions[name] = agent.turns
    return len(files), empty, sessions


def run(raw: Path, out: Path, extract_from: Path | None = None) -> None:
    """Write one run folder per repository in RAW, with its labels (all null)."""
    if extract_from is not None:
        extract(extract_from, raw)
    total = {"chats": 0, "sessions": 0, "turns": 0, "empty agents": 0}
    for repo in sorted(p for p in raw.iterdir() if p.is_dir()):
        chats, empty, sessions = sessions_of(repo)
        folder = out / repo.name
        folder.mkdir(parents=True, exist_ok=True)
        for name, turns in sorted(sessions.items()):
            write_session(folder / f"{name}.jsonl", (t.model_dump(exclude_none=True) for t in turns))
        write_labels(folder, dict.fromkeys(sessions))
        turn_count = sum(len(t) for t in sessions.values())
        print(f"{repo.name}: {chats} chat files, {len(sessions)} sessions, {turn_count} turns", file=sys.stderr)
        for key, value in (("chats", chats), ("sessions", len(sessions)), ("turns", turn_count), ("empty agents", empty)):
            total[key] += value
    print("total: " + ", ".join(f"{v} {k}" for k, v in total.items()), file=sys.stderr)
