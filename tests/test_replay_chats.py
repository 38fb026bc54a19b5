"""``a0org replay`` on Agent-Zero's saved chats. The fixtures are chats recorded with real
Agent-Zero v1.7 and v0.9.8.2 and the scripted model (tests/real_a0/record_chats.py)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from pack_commands import a0org

from org.a0.saved_chats import ChatError, chat_files, log_turns, read_chat
from org.kernel import events
from org.replay_chats import MARKER, replay_chats
from org.stats import stats

CHATS = ROOT / "tests" / "fixtures" / "a0_chats"


def run(path: Path, org_dir: Path, **options) -> tuple[int, list[dict], str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = replay_chats(path, out, err, org_dir, **options)
    actions = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    return status, actions, out.getvalue(), err.getvalue()


def test_saved_chats_of_both_versions_read_as_turns():
    loop17, loop098 = read_chat(CHATS / "v1.7/loop/chat.json"), read_chat(CHATS / "v0.9.8.2/loop/chat.json")
    assert (loop17.era, loop098.era) == ("D", "C")  # v0.9.9+ messages carry ids
    for chat in (loop17, loop098):
        turns = chat.agents[0].turns  # the greeting Agent-Zero adds to a new chat is not a turn
        assert [t.tool for t in turns] == ["code_execution_tool"] * 4 + ["response"]
        assert turns[0].user == "Read /nonexistent/file" and all(t.user is None for t in turns[1:])
        assert "No such file or directory" in turns[0].output and turns[0].args["code"] == "cat /nonexistent/file"
    two = read_chat(CHATS / "v1.7/two_tasks/chat.json").agents[0].turns
    assert [t.turn for t in two if t.user] == [1, 4] and two[3].user == "Now read /nonexistent/b"
    delegate = read_chat(CHATS / "v1.7/delegate/chat.json")
    assert [(a.number, len(a.turns)) for a in delegate.agents] == [(0, 2), (1, 4)]
    assert delegate.agents[0].turns[0].output == "No c (subordinate)."


def test_the_ui_log_of_every_recorded_chat_shows_the_turns_of_its_history():
    """The log Agent-Zero saves with a chat (its last 1000 UI items) reads as the same turns as the
    history: each reply, its tool and arguments, the tool's answer, the user's messages and the
    subordinate's task. Only an answer over 15,000 characters is cut in the log."""
    for path in chat_files(CHATS):
        chat, logged = read_chat(path), log_turns(json.loads(path.read_text())["log"])
        for agent in chat.agents:
            kept = [(t.user, t.tool, t.args) for t in agent.turns]
            assert [(t.user, t.tool, t.args) for t in logged[agent.number]] == kept, (path, agent.number)
            for from_history, from_log in zip(agent.turns, logged[agent.number]):
                output = from_history.output
                if output is not None and len(output) > 15_000:
                    assert "Characters hidden >>" in from_log.output and from_log.output[:1000] == output[:1000]
                else:
                    assert from_log.output == output, (path, from_history.turn)


def summarised(chat: dict, replies: int) -> dict:
    """The chat as Agent-Zero leaves it once it compressed the first ``replies`` turns of the
    current topic (the user's message stays): one message holds their summary."""
    history = json.loads(chat["agents"][0]["history"])
    messages = history["current"]["messages"]
    summary = {**messages[1], "ai": False, "content": {"messages_summary": "The agent read the file and failed."}}
    history["current"]["messages"] = [messages[0], summary, *messages[1 + 2 * replies:]]
    chat["agents"][0]["history"] = json.dumps(history)
    return chat


@pytest.mark.parametrize("version", ["v1.7", "v0.9.8.2"])
def test_turns_agent_zero_compressed_out_of_the_history_are_read_from_the_log(tmp_path, version):
    chat = summarised(json.loads((CHATS / version / "loop/chat.json").read_text()), replies=3)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "chat.json").write_text(json.dumps(chat))
    read = read_chat(tmp_path / "c" / "chat.json").agents[0]
    assert read.from_log and read.summarised == 1 and len(read.turns) == 5
    assert read.turns[0].user == "Read /nonexistent/file" and read.turns[2].args["code"] == "cat /nonexistent/file"
    status, actions, out, _ = run(tmp_path / "c", tmp_path / "r")
    assert status == 0 and [(a["turn"], a["action"]) for a in actions] == [(3, "steer"), (4, "block")], out
    assert "1 summarised message(s); the turns were read from the UI log" in out

    chat["log"] = {"logs": []}  # a chat saved without its log: what the history holds
    (tmp_path / "c" / "chat.json").write_text(json.dumps(chat))
    status, actions, out, _ = run(tmp_path / "c", tmp_path / "r")
    assert status == 0 and actions == [] and "1 summarised message(s) not replayed" in out


def test_a_folder_of_chats_from_both_versions_replays_with_a_summary_and_events(tmp_path):
    status, actions, out, err = run(CHATS, tmp_path / "all")  # chats gathered from two installations, a folder each
    assert status == 0 and err == "" and len(chat_files(CHATS)) == 9
    assert "9 chat(s), 44 turn(s): steered 5 (11.36 per 100 turns), blocked 2, paused 0" in out
    status, actions, out, err = run(CHATS / "v1.7", tmp_path / "r")
    assert status == 0, err
    loop_id = read_chat(CHATS / "v1.7/loop/chat.json").id
    assert [(a["chat"], a["turn"], a["action"], a["anomaly"]) for a in actions if a["chat"] == loop_id] == [
        (loop_id, 3, "steer", "loop"), (loop_id, 4, "block", "loop")]
    sub = [a for a in actions if a.get("agent") == 1]
    assert [(a["turn"], a["anomaly"]) for a in sub] == [(3, "loop")]
    assert "5 chat(s), 25 turn(s): steered 3 (12 per 100 turns), blocked 1, paused 0" in out
    assert "by kind: block:loop 1, steer:loop 3" in out
    log = list(events.read(tmp_path / "r"))
    figures = stats(log)
    assert figures["total"]["steered"] == 3 and figures["total"]["blocked"] == 1
    assert {e.chat for e in log if e.type == "steering"} >= {loop_id, f"{read_chat(CHATS / 'v1.7/delegate/chat.json').id}/A1"}


def test_the_older_layouts_are_found_and_replayed(tmp_path):
    """v0.8.1 to v0.9.7 keep chats in tmp/chats/<id>/chat.json (without the chat's data), v0.8.0 in tmp/chats/<id>.json."""
    tree = tmp_path / "a0"
    chat = json.loads((CHATS / "v0.9.8.2/loop/chat.json").read_text())
    for key in ("data", "output_data"):
        chat.pop(key, None)
    (tree / "tmp" / "chats" / "old1").mkdir(parents=True)
    (tree / "tmp" / "chats" / "old1" / "chat.json").write_text(json.dumps({**chat, "id": None}))
    chat.pop("id")  # the file's name says which chat it is
    (tree / "tmp" / "chats" / "old0.json").write_text(json.dumps(chat))
    status, actions, out, err = run(tree, tmp_path / "r")
    assert status == 0, err
    assert sorted({a["chat"] for a in actions}) == ["old0", "old1"]
    assert "2 chat(s), 10 turn(s)" in out


def test_bad_and_partial_chat_files_get_a_line_each_and_the_rest_still_replays(tmp_path):
    folder = tmp_path / "chats"
    shutil.copytree(CHATS / "v1.7/loop", folder / "good")
    text = (CHATS / "v1.7/two_tasks/chat.json").read_text()
    (folder / "cut").mkdir()
    (folder / "cut" / "chat.json").write_text(text[: len(text) // 2])  # Agent-Zero was writing it
    (folder / "other").mkdir()
    (folder / "other" / "chat.json").write_text('{"hello": 1}')
    (folder / "history").mkdir()
    (folder / "history" / "chat.json").write_text(json.dumps({"id": "h", "agents": [{"number": 0, "history": "{not json"}]}))
    status, actions, out, err = run(folder, tmp_path / "r")
    assert status == 0
    lines = err.splitlines()
    assert len(lines) == 3
    assert f"{folder / 'cut' / 'chat.json'}: skipped: not valid JSON" in err
    assert f"{folder / 'other' / 'chat.json'}: skipped: agents: missing; not an Agent-Zero saved chat" in err
    assert f"{folder / 'history' / 'chat.json'}: skipped: agents[0].history: not valid JSON" in err
    assert {a["chat"] for a in actions} == {read_chat(folder / "good" / "chat.json").id}
    assert "1 chat(s), 5 turn(s)" in out and "3 file(s) skipped" in out
    with pytest.raises(ChatError):
        read_chat(folder / "cut" / "chat.json")


def test_two_doctrines_on_the_same_chats(tmp_path):
    strict = tmp_path / "strict.yaml"
    strict.write_text("loop:\n  repeat_threshold: 2\n")
    role_file = tmp_path / "codegen.yaml"
    role_file.write_text("role_id: codegen\ndoctrine:\n  loop:\n    repeat_threshold: 5\n")
    _, default, _, _ = run(CHATS / "v0.9.8.2", tmp_path / "a")
    _, early, _, _ = run(CHATS / "v0.9.8.2", tmp_path / "b", doctrine_file=strict)
    _, late, out, _ = run(CHATS / "v0.9.8.2", tmp_path / "c", doctrine_file=role_file)
    first = lambda actions: min(a["turn"] for a in actions if a["anomaly"] == "loop" and a["action"] == "steer")
    assert first(early) == 2 < first(default) == 3
    assert not [a for a in late if a["action"] == "steer"] and "steered 0" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text("cooldown_turns: -4\n")
    status, actions, _, err = run(CHATS / "v0.9.8.2", tmp_path / "d", doctrine_file=bad)
    assert status == 2 and not actions and "cooldown_turns" in err


def test_what_is_printed_is_redacted(tmp_path):
    chat = json.loads((CHATS / "v1.7/loop/chat.json").read_text())
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    chat["agents"][0]["history"] = chat["agents"][0]["history"].replace("cat /nonexistent/file", f"cat /nonexistent/{secret}")
    chat["name"] = f"token {secret}"
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "chat.json").write_text(json.dumps(chat))
    status, actions, out, err = run(tmp_path / "c", tmp_path / "r")
    assert status == 0 and actions and secret not in out + err and "[REDACTED]" in actions[0]["text"]


def test_a_chat_name_on_several_lines_keeps_the_table_one_row_per_chat(tmp_path):
    """Agent-Zero names chats with the utility model, whose answer may start with blank lines."""
    chat = json.loads((CHATS / "v1.7/loop/chat.json").read_text())
    chat["name"] = "\n\nSkill Boss\tWorkflows\n"
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "chat.json").write_text(json.dumps(chat))
    status, _, out, _ = run(tmp_path / "c", tmp_path / "r")
    rows = [line for line in out.splitlines() if "Skill Boss" in line]
    assert status == 0 and len(rows) == 1 and "Skill Boss Workflows" in rows[0], out


def test_the_replay_writes_only_to_a_folder_of_its_own(tmp_path):
    organizations = tmp_path / "organizations"
    organizations.mkdir()
    (organizations / "active.json").write_text("{}")
    status, actions, out, err = run(CHATS / "v1.7/loop", organizations)
    assert status == 2 and "holds files no replay wrote" in err and sorted(p.name for p in organizations.iterdir()) == ["active.json"]
    run(CHATS / "v1.7/loop", tmp_path / "r")
    run(CHATS / "v1.7/loop", tmp_path / "r")  # a second run starts the events afresh
    assert (tmp_path / "r" / MARKER).is_file()
    assert sum(e.type == "steering" for e in events.read(tmp_path / "r")) == 1


def test_the_command_replays_a_chat_and_prints_the_summary_as_json(tmp_path):
    result = a0org("replay", str(CHATS / "v0.9.8.2" / "loop" / "chat.json"), "--org-dir", str(tmp_path / "r"), "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(l["turn"], l["action"]) for l in lines[:-1]] == [(3, "steer"), (4, "block")]
    assert lines[-1]["kind"] == "summary" and lines[-1]["chats"] == 1 and lines[-1]["turns"] == 5
    stats_out = a0org("stats", "--org-dir", str(tmp_path / "r"))
    assert "steered 1, blocked 1" in stats_out.stdout
    assert a0org("replay", str(tmp_path / "nothing-here"), "--org-dir", str(tmp_path / "r2")).returncode == 2
