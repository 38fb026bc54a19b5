"""``a0org replay`` on Agent-Zero's saved chats: what the supervisor would have done on them.

Each chat (each of its agents: the one the user talks to and the subordinates saved with it)
runs through the real hook files in a stand-in agent that carries the chat's id and project,
so the supervision events land in the replay folder's ``events/`` with the chat they belong
to, where ``a0org stats --org-dir DIR`` and ``a0org events --org-dir DIR`` read them. Nothing
is sent anywhere: the replay folder has no LLM supervisors configured and no shared volume is
linked. What is printed passes the redactor.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import yaml

from org.a0.saved_chats import ChatError, SavedChat, chat_files, read_chat
from org.contracts import TraceHeader
from org.kernel.events import FOLDER as EVENTS_FOLDER
from org.kernel.loading import DocumentError, Problem, load_yaml
from org.kernel.redact import redact
from org.replay import organization_home, prepare_organization, role_of, steering_lines
from org.standin.session import StandInSession

#: A folder the replay made: only such a folder (or an empty or new one) is written to.
MARKER = ".a0org-replay"


@dataclass
class ChatOutcome:
    chat: SavedChat
    actions: list[dict[str, Any]] = field(default_factory=list)

    def count(self, action: str) -> int:
        return sum(a["action"] == action for a in self.actions)


def load_doctrine(path: Path) -> dict[str, Any]:
    """Doctrine overrides from a YAML or JSON file: a mapping of doctrine values, or a role file
    (its ``doctrine``). Checked against the role before any chat runs."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DocumentError([Problem(str(path), None, "", f"cannot read: {exc}")]) from None
    if isinstance(data, dict) and isinstance(data.get("doctrine"), dict):
        data = data["doctrine"]
    if not isinstance(data, dict):
        raise DocumentError([Problem(str(path), None, "", "not a mapping of doctrine values")])
    return data


def make_header(role: str | None, doctrine: dict[str, Any] | None) -> TraceHeader | None:
    if not role and not doctrine:
        return None
    header = TraceHeader(kind="header", role=role, doctrine=doctrine or {})
    role_of(header)  # DocumentError naming the field when the role or a value is wrong
    return header


def replay_folder(path: Path | None) -> Path:
    """The folder the replay writes to: ``path`` (new, empty, or made by a replay before, whose
    events are then started afresh), else a new ``a0org-replay-<time>`` in the current folder."""
    folder = path or Path.cwd() / f"a0org-replay-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    if folder.exists() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise DocumentError([Problem(str(folder), None, "--org-dir",
                                     "holds files no replay wrote (an organizations folder?); give a new or empty folder")])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text("made by a0org replay; its events/ hold the supervision events of the chats replayed\n")
    shutil.rmtree(folder / EVENTS_FOLDER, ignore_errors=True)
    return folder


def replay_chat(chat: SavedChat, home: Path, header: TraceHeader | None, era: str | None = None) -> ChatOutcome:
    """Every agent of the chat through its own stand-in session (their supervisors are separate in Agent-Zero too)."""
    outcome = ChatOutcome(chat)
    for agent in chat.agents:
        if not agent.turns:
            continue
        prepare_organization(home, header)
        session = StandInSession(era=era or chat.era)
        session.agent.context.id = chat.id if agent.number == 0 else f"{chat.id}/A{agent.number}"
        if chat.project:
            session.agent.context.data["project"] = chat.project
        for line in steering_lines(session.run(agent.turns)):
            outcome.actions.append({"chat": chat.id, **({"agent": agent.number} if agent.number else {}), **line,
                                    "text": redact(line["text"])})
    return outcome


def replay_chats(path: Path, out: TextIO, err: TextIO, org_dir: Path | None = None, role: str | None = None,
                 doctrine_file: Path | None = None, era: str | None = None, as_json: bool = False) -> int:
    """Replay the saved chats at ``path``; print each action as a JSON line, then the summary.
    Exit status 0, 1 when no chat could be replayed, 2 for a bad doctrine or folder."""
    try:
        header = make_header(role, load_doctrine(doctrine_file) if doctrine_file else None)
        files = chat_files(path)
        if not files:
            raise DocumentError([Problem(str(path), None, "", "no saved chat here (chat.json, <id>/chat.json, usr/chats, tmp/chats)")])
        folder = replay_folder(org_dir)
    except DocumentError as exc:
        for problem in exc.problems:
            print(problem, file=err)
        return 2
    outcomes: list[ChatOutcome] = []
    skipped = 0
    with organization_home(folder) as home:
        for file in files:
            try:
                chat = read_chat(file)
            except ChatError as exc:
                print(f"{file}: skipped: {exc}", file=err)
                skipped += 1
                continue
            outcome = replay_chat(chat, home, header, era)
            outcomes.append(outcome)
            for action in outcome.actions:
                print(json.dumps(action, ensure_ascii=False), file=out)
    figures = summary(outcomes, skipped)
    if as_json:
        print(json.dumps({"kind": "summary", **figures, "org_dir": str(folder)}), file=out)
    else:
        out.write(render_summary(figures, folder))
    return 0 if outcomes else 1


def summary(outcomes: list[ChatOutcome], skipped: int = 0) -> dict[str, Any]:
    turns = sum(o.chat.turns for o in outcomes)
    steered = sum(o.count("steer") for o in outcomes)
    kinds = Counter(f"{a['action']}:{a['anomaly']}" for o in outcomes for a in o.actions)
    return {
        "chats": len(outcomes), "skipped": skipped, "turns": turns, "steered": steered,
        "blocked": sum(o.count("block") for o in outcomes), "paused": sum(o.count("pause") for o in outcomes),
        "steering_per_100_turns": round(100 * steered / turns, 2) if turns else None,
        "by_kind": dict(sorted(kinds.items())),
        "per_chat": [{"chat": o.chat.id, "name": " ".join(redact(o.chat.name).split())[:40], "era": o.chat.era, "turns": o.chat.turns,
                      "steered": o.count("steer"), "blocked": o.count("block"), "paused": o.count("pause"),
                      "summarised": sum(a.summarised for a in o.chat.agents),
                      "from_log": any(a.from_log for a in o.chat.agents),
                      "recorded_steering": sum(a.recorded_steering for a in o.chat.agents)} for o in outcomes],
    }


def render_summary(figures: dict[str, Any], folder: Path) -> str:
    lines = ["", f"{'CHAT':<14} {'NAME':<24} {'API':<3} {'TURNS':>5} {'STEERED':>7} {'BLOCKED':>7} {'PAUSED':>6}"]
    for row in figures["per_chat"]:
        notes = []
        if row["summarised"]:
            read = "the turns were read from the UI log" if row["from_log"] else "not replayed"
            notes.append(f"{row['summarised']} summarised message(s){'; ' if row['from_log'] else ' '}{read}")
        if row["recorded_steering"]:
            notes.append(f"ran supervised: {row['recorded_steering']} steering in the chat")
        lines.append(f"{row['chat'][:14]:<14} {row['name'][:24]:<24} {row['era']:<3} {row['turns']:>5} {row['steered']:>7} "
                     f"{row['blocked']:>7} {row['paused']:>6}" + (f"  ({'; '.join(notes)})" if notes else ""))
    per100 = figures["steering_per_100_turns"]
    lines.append(f"{figures['chats']} chat(s), {figures['turns']} turn(s): steered {figures['steered']} "
                 f"({'-' if per100 is None else f'{per100:g}'} per 100 turns), blocked {figures['blocked']}, paused {figures['paused']}"
                 + (f"; {figures['skipped']} file(s) skipped" if figures["skipped"] else ""))
    if figures["by_kind"]:
        lines.append("by kind: " + ", ".join(f"{kind} {n}" for kind, n in figures["by_kind"].items()))
    lines.append(f"events: {folder / EVENTS_FOLDER} (a0org stats --org-dir {folder}; a0org events --org-dir {folder})")
    return "\n".join(lines) + "\n"
