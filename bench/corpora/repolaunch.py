"""RepoLaunch environment-setup sessions, from github.com/SWE-bench-Live/RepoLaunch-trajectory-archive.

RAW is the archive's files at e068854f5e74252b1f312036aade64e5eda1ebdf (its language folders at
the root; files of 4 MiB or more may be absent, as in a shallow copy); OUT is the corpus folder,
which receives ``repolaunch-gpt-5.2/<run>/<instance>.jsonl`` and each run's ``labels.json``.

RepoLaunch (github.com/microsoft/RepoLaunch) turns a repository at a commit into a Docker
environment that builds it and runs its tests: the agent behind SWE-bench-Live. One folder per
language (``c``, ``cpp``, ``cs``, ``go``, ``java``, ``js``, ``rust``, ``ts`` on Linux,
``windows_tasks`` on Windows Server images), each with ``config.json`` (GPT-5.2 or GPT-5.2-Codex;
80 setup steps, 20 verify steps, 2 trials) and ``playground/<instance>/`` holding ``setup.log``
(the agent's log) and ``result.json`` (the outcome). The setup agent replies ``Thought: …
Action: <command>…</command>`` (or ``<search>``, ``<stop>``); the command runs in a persistent
bash (PowerShell) session, and the observation is ``Observation:`` then the echoed command, its
output, the prompt line and ``exit code: N``. Then a verify agent runs the tests in the same
container (``<command>``, then ``<issue>None</issue>`` or ``<issue>what is wrong</issue>``); on
an issue the setup agent gets a second trial. ``setup.log`` is the Python log of all of it: a
record per reply (``=== Ai Message ===``) and per observation (``=== Human Message ===``),
between ``Start/End setup conversation`` and ``Start/End verify conversation`` records.

Decisions (why):

* One session per instance: the whole log, setup and verify in order (a second setup trial
  reads the verify transcript: one piece of work). A log holding more than one launch appended
  is read from its last (``Using language`` again), the one ``result.json`` describes.
* One turn per reply, its action what RepoLaunch's parser takes: the first non-empty
  ``<command>``, else (setup) the first ``<search>``, else ``<stop></stop>``; (verify) the first
  ``<command>``, else the first ``<issue>``. ``<command>``: tool ``bash`` (``powershell`` on
  Windows) ``{"command"}``; ``<search>``: ``search {"query"}``; ``<stop>``: ``stop {}``, no
  output (the loop ends); ``<issue>``: ``issue {"issue"}``. A reply with no action got
  RepoLaunch's format message and ran nothing: a turn without a tool, the reply its ``thought``.
* The output is the observation as the model read it, ``Observation:`` removed; no ``ok``: the
  pack reads the output as it reads Agent-Zero's, by its text. ``exit_code`` is the closing N.
* ``thought``: the reply's text before its action, ``Thought:``/``Action:`` removed.
* ``user``: the log keeps no prompts, so each conversation's first turn carries its task as
  RepoLaunch's code states it (the setup task with the base image and instance, the verify
  task, the retry message): each is a new task for the replay.
* Step costs, ``organize.log`` (a later stage) and ``instance.json`` are not read; an instance
  without a reply is not written.
* Labels from ``result.json``: ``completed`` true is resolved; false with the exception
  ``Launch failed`` (both trials failed verification, or the step limit) is not; false with a
  traceback (the model's API, a broken pipe) is an infrastructure crash: null. Without a
  readable ``result.json`` the log decides: resolved when it records "Setup completed
  successfully" and "Image … committed successfully" (as every log with both does), else null.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from .traces import TraceLine, read_json, write_labels, write_session

RAW_HELP = "the archive's files at e068854f (its language folders at the root)"
OUT_HELP = "the corpus folder: repolaunch-gpt-5.2/ is written in it"

SOURCE = "repolaunch-gpt-5.2"
RUNS = {"c": "linux-c", "cpp": "linux-cpp", "cs": "linux-cs", "go": "linux-go", "java": "linux-java",
        "js": "linux-js", "rust": "linux-rust", "ts": "linux-ts", "windows_tasks": "windows"}
RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - ", re.M)
AI = re.compile(r"\A\s*=+ Ai Message =+\n")
HUMAN = re.compile(r"\A\s*=+ Human Message =+\n")
COST = re.compile(r"\s*-- <step_cost>.*?</step_cost>\s*\Z", re.S)
EXIT = re.compile(r"exit code: (-?\d+)\s*\Z")
TAG = {name: re.compile(rf"<{name}>(.*?)</{name}>", re.S) for name in ("command", "search", "issue")}
FIRST_TAG = re.compile(r"<(command|search|stop|issue)>")
COMMITTED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - Image \S+ committed successfully", re.M)

SETUP_TASK = ("You are a developer. Your task is to install dependencies and set up a environment that is "
              "able to run the tests of the project.\n\n- You start with an initial Docker container based on "
              "{base_image}.\n- You interact with a {shell} session inside this container.\n- Project files are "
              "located in /testbed within the container, and your current working directory of bash is already "
              "set to /testbed.\n- No need to clone the project again.\n\nThe final objective is to successfully "
              "run the tests of the project.\n\nRepository: {instance}")
VERIFY_TASK = ("You are a developer. Your task is to verify whether the environment for the given project is set "
               "up correctly. Your colleague has set up a Docker environment for the project. You need to verify "
               "if it can successfully run the tests of the project.")
RETRY = ("Test cases did not run successfully. The setup of the repository is not successful so far... "
         "Please try again to setup dependencies, build the repo and run tests!")
FIELDS = ("turn", "user", "tool", "args", "output", "exit_code", "thought")


def first_tag(reply: str, name: str) -> str | None:
    """RepoLaunch's ``extract_tag_content``: the first tag's content, stripped; None when empty."""
    match = TAG[name].search(reply)
    return match.group(1).strip() if match and match.group(1).strip() else None


def action_of(reply: str, phase: str, shell: str) -> tuple[str, dict[str, Any]] | None:
    """The tool and arguments of the action RepoLaunch takes from a reply; None for none."""
    command = first_tag(reply, "command")
    if command:
        return shell, {"command": command}
    if phase == "setup":
        search = first_tag(reply, "search")
        if search:
            return "search", {"query": search}
        return ("stop", {}) if "<stop>" in reply and "</stop>" in reply else None
    issue = first_tag(reply, "issue")
    return ("issue", {"issue": issue}) if issue else None


def thought_of(reply: str) -> str:
    match = FIRST_TAG.search(reply)
    text = re.sub(r"\s*Action:\s*\Z", "", (reply[:match.start()] if match else reply).strip())
    return re.sub(r"\AThought:\s*", "", text.strip()).strip()


def last_launch(log: str) -> str:
    """The last launch of a log that holds more than one appended."""
    starts = [m.start() for m in RECORD.finditer(log) if log[m.end():].startswith("Using language")]
    return log[starts[-1]:] if len(starts) > 1 else log


def convert_log(log: str, instance: str, windows: bool) -> list[TraceLine]:
    """The turns of one instance's log (its last launch)."""
    bounds = list(RECORD.finditer(log))
    records = [log[m.end():bounds[i + 1].start() if i + 1 < len(bounds) else len(log)] for i, m in enumerate(bounds)]
    base_image = next((r.split("Selected base image:", 1)[1].split("   -- <step_cost>")[0].strip()
                       for r in records if r.startswith("Selected base image:")), "?")
    shell = "powershell" if windows else "bash"
    turns: list[dict[str, Any]] = []
    phase: str | None = None
    trials = 0
    task: str | None = None
    waiting: dict[str, Any] | None = None  # the reply whose observation comes next
    for record in records:
        head = record.lstrip("\n")[:80]
        if "Start setup conversation" in head:
            trials += 1
            phase, waiting = "setup", None
            task = SETUP_TASK.format(base_image=base_image, shell="PowerShell" if windows else "Bash",
                                     instance=instance) if trials == 1 else RETRY
        elif re.search(r"Start verify( agent)? conversation", head):
            phase, task, waiting = "verify", VERIFY_TASK, None
        elif "End setup conversation" in head or re.search(r"End verify( agent)? conversation", head):
            phase, waiting = None, None
        elif phase is not None and (reply_head := AI.match(record)):
            reply = COST.sub("", record[reply_head.end():]).strip()
            turn: dict[str, Any] = {"turn": len(turns) + 1}
            if task is not None:
                turn["user"], task = task, None
            action = action_of(reply, phase, shell)
            if action is not None:
                turn["tool"], turn["args"] = action
            thought = thought_of(reply) if action is not None else reply
            if thought:
                turn["thought"] = thought
            waiting = turn if action is not None and action[0] != "stop" else None
            turns.append(turn)
        elif phase is not None and waiting is not None and (seen := HUMAN.match(record)):
            output = re.sub(r"\A\s*Observation:\n?", "", COST.sub("", record[seen.end():]).rstrip("\n"))
            waiting["output"] = output
            code = EXIT.search(output) if waiting["tool"] == shell else None
            if code is not None:
                waiting["exit_code"] = int(code.group(1))
            waiting = None
    return [{key: turn[key] for key in FIELDS if key in turn} for turn in turns]  # type: ignore[misc]


def label(folder: Path, log: str) -> bool | None:
    try:
        result = read_json(folder / "result.json")
    except (OSError, ValueError):  # absent from the copy, or unreadable: the log's own record of success
        return True if "Setup completed successfully" in log and COMMITTED.search(log) is not None else None
    if result.get("completed") is True:
        return True
    return False if result.get("completed") is False and str(result.get("exception") or "").strip() == "Launch failed" else None


def run(raw: Path, out: Path) -> None:
    """Write the source: one run folder per language."""
    if not raw.is_dir():
        raise SystemExit(f"{raw} is not a folder")
    for language, name in RUNS.items():
        playground = raw / language / "playground"
        if not playground.is_dir():
            continue
        folder = out / SOURCE / name
        folder.mkdir(parents=True, exist_ok=True)
        labels: dict[str, bool | None] = {}
        turns = 0
        for instance in sorted(path for path in playground.iterdir() if path.is_dir()):
            if not (instance / "setup.log").is_file():
                continue
            log = last_launch((instance / "setup.log").read_text(encoding="utf-8", errors="replace"))
            lines = convert_log(log, instance.name, windows=language == "windows_tasks")
            if lines:
                write_session(folder / f"{instance.name}.jsonl", lines)
                labels[instance.name] = label(instance, log)
                turns += len(lines)
        write_labels(folder, labels)
        print(f"{SOURCE}/{name}: {len(labels)} sessions, {turns} turns", file=sys.stderr)
