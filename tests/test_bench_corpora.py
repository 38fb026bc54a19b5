"""The corpus converters (bench/corpora/): each turns a small raw input shaped as its public
source is into replay traces line by line, with its decisions on what a turn is, what is left
out and how sessions are labelled; and a converted session replays with bench/real_sessions.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.corpora import agent_zero_chats, autocoderover, mini_swe_agent, mini_swe_agent_tracked, mini_swe_agent_v2, openhands_completions, openhands_examples, repolaunch
from bench.corpora.__main__ import main as corpora_main
from bench.real_sessions import read_session, replay_session


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def labels(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "labels.json").read_text(encoding="utf-8"))


# mini-swe-agent -------------------------------------------------------------------------------

def mini_trajectory(instance: str, exchanges: list[tuple[str, str | None]], exit_status: str, closing: bool = False) -> dict:
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": [{"type": "text", "text": f"Fix {instance}."}]}]
    for reply, observation in exchanges:
        messages.append({"role": "assistant", "content": reply})
        if observation is not None:
            messages.append({"role": "user", "content": observation})
    if closing:
        messages.append({"role": "user", "content": ""})  # LimitsExceeded's closing message
    return {"instance_id": instance, "messages": messages,
            "info": {"exit_status": exit_status, "model_stats": {"api_calls": len(exchanges)},
                     "config": {"agent": {"action_regex": r"```bash\s*\n(.*?)\n```"}}}}


def test_mini_swe_agent_a_reply_is_a_turn_and_the_returncode_tag_stays_in_the_output(tmp_path: Path) -> None:
    run_dir = tmp_path / "raw" / "run_results" / "gpt5-output"
    write_json(run_dir / "gpt5_eval.json", {"resolved_ids": ["django__django-1"]})
    write_json(run_dir / "django__django-1" / "django__django-1.traj.json", mini_trajectory("django__django-1", [
        ("THOUGHT: look first\n\n```bash\nls  \n```", "<returncode>0</returncode>\n<output>\nsetup.py\n</output>"),
        ("two at once\n```bash\nls\n```\n```bash\npwd\n```",
         "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."),
        ("```bash\nsleep 999\n```", "The last command <command>sleep 999</command> timed out and has been killed.\n<output>\n</output>"),
        ("Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```", "diff --git a/x.py b/x.py\n"),
    ], "Submitted"))
    write_json(run_dir / "django__django-2" / "django__django-2.traj.json", mini_trajectory("django__django-2", [
        ("```bash\npython t.py\n```", "<returncode>1</returncode>\n<output>\nboom\n</output>"),
        ("```bash\nsleep 9\n```", None),  # it crashed while the command timed out: no observation
    ], "AttributeError"))

    mini_swe_agent.run(tmp_path / "raw", tmp_path / "out", ["mini-gpt-5-swebench"])

    out = tmp_path / "out" / "mini-gpt-5-swebench" / "gpt5-output"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["mini-gpt-5-swebench"]
    assert lines(out / "django__django-1.jsonl") == [
        {"turn": 1, "user": "Fix django__django-1.", "tool": "bash", "args": {"command": "ls"},
         "output": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>", "exit_code": 0, "thought": "look first"},
        {"turn": 2, "thought": "two at once"},  # the format error: nothing ran
        {"turn": 3, "tool": "bash", "args": {"command": "sleep 999"}, "thought": "",
         "output": "The last command <command>sleep 999</command> timed out and has been killed.\n<output>\n</output>"},
        {"turn": 4, "tool": "bash", "args": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"},
         "output": "diff --git a/x.py b/x.py\n", "thought": "Done."},
    ]
    assert lines(out / "django__django-2.jsonl") == [
        {"turn": 1, "user": "Fix django__django-2.", "tool": "bash", "args": {"command": "python t.py"},
         "output": "<returncode>1</returncode>\n<output>\nboom\n</output>", "exit_code": 1, "thought": ""},
        {"turn": 2, "tool": "bash", "args": {"command": "sleep 9"}, "thought": ""},
    ]
    assert (out / "django__django-2.jsonl").read_text(encoding="utf-8").startswith('{"args": ')  # keys sorted
    assert labels(out) == {"django__django-1": {"resolved": True}, "django__django-2": {"resolved": False}}


def test_mini_swe_agent_refuses_a_trajectory_whose_replies_and_model_calls_disagree(tmp_path: Path) -> None:
    trajectory = mini_trajectory("a", [("```bash\nls\n```", "<returncode>0</returncode>")], "Submitted")
    trajectory["info"]["model_stats"]["api_calls"] = 2
    with pytest.raises(ValueError, match="1 replies but 2 model calls"):
        mini_swe_agent.convert_trajectory(trajectory)


# mini-swe-agent 2.x (tool calling) ------------------------------------------------------------

def mini_v2_trajectory(instance: str, steps: list[tuple[str, list[tuple[str, str]]] | None], exit_status: str,
                       patch: str | None = None) -> dict:
    """``steps``: a reply (its text, its calls as (command, observation)) or None for a reply without a call."""
    owner, name = instance.split("__")
    messages: list[dict] = [{"role": "system", "content": "You are a helpful assistant."},
                            {"role": "user", "content": f"Fix {instance}."}]
    for n, step in enumerate(steps):
        if step is None:
            messages.append({"role": "user", "content": "Tool call error: No tool calls found.", "extra": {"interrupt_type": "FormatError"}})
            continue
        text, calls = step
        ids = [f"call_{n}_{k}" for k in range(len(calls))]
        messages.append({"role": "assistant", "content": text,
                         "tool_calls": [{"id": i, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": c})}}
                                        for i, (c, _) in zip(ids, calls)],
                         "extra": {"actions": [{"command": c, "tool_call_id": i} for i, (c, _) in zip(ids, calls)]}})
        for i, (_, observation) in zip(ids, calls):
            exception = "action was not executed" if "action was not executed" in observation else ""
            messages.append({"role": "tool", "tool_call_id": i, "content": observation, "extra": {"exception_info": exception}})
    if patch is not None:
        messages.append({"role": "exit", "content": patch, "extra": {"exit_status": exit_status, "submission": patch}})
    return {"trajectory_format": "mini-swe-agent-1.1", "messages": messages, "info": {
        "exit_status": exit_status, "model_stats": {"api_calls": len(steps)},
        "config": {"environment": {"image": f"docker.io/swebench/sweb.eval.x86_64.{owner}_1776_{name}:latest"}}}}


def test_mini_swe_agent_v2_a_reply_is_a_turn_of_its_calls_and_the_submission_holds_the_patch(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    reports = raw / "logs" / "run_evaluation" / "deepseek" / "deepseek-chat"
    write_json(reports / "django__django-1" / "report.json", {"django__django-1": {"resolved": True}})
    write_json(raw / "results_full" / "instance_10.json", mini_v2_trajectory("django__django-1", [
        ("Look first. é", [("ls", "<returncode>0</returncode>\n<output>\nsetup.py\n</output>"),
                           ("cat nope", "<returncode>1</returncode>\n<output>\nno such file\n</output>")]),
        None,  # the format error: nothing ran
        ("", [("sleep 999", "<exception>timed out</exception>\n<returncode>-1</returncode>\n<output>\n</output>")]),
        ("Submit.", [("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "<exception>action was not executed</exception>\n"
                                                                   "<returncode>-1</returncode>\n<output>\n</output>")]),
    ], "Submitted", patch="diff --git a/x.py b/x.py\n"))
    write_json(raw / "results_full" / "instance_9.json", mini_v2_trajectory("django__django-2", [
        ("", [("python t.py", "<returncode>1</returncode>\n<output>\nboom\n</output>")])], "LimitsExceeded"))
    (raw / "results_full" / "instance_11.json").write_text("", encoding="utf-8")  # empty in the repository: skipped

    assert corpora_main(["mini-swe-agent-v2", str(raw), str(tmp_path / "out")]) == 0

    out = tmp_path / "out" / mini_swe_agent_v2.RUN
    assert lines(out / "django__django-1.jsonl") == [
        {"turn": 1, "user": "Fix django__django-1.", "tool": "bash", "args": {"command": "ls"},
         "output": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>", "exit_code": 0, "thought": "Look first. é"},
        {"turn": 1, "tool": "bash", "args": {"command": "cat nope"},  # the reply's second call: the same turn
         "output": "<returncode>1</returncode>\n<output>\nno such file\n</output>", "exit_code": 1},
        {"turn": 2},
        {"turn": 3, "tool": "bash", "args": {"command": "sleep 999"},  # an <exception>: no exit code
         "output": "<exception>timed out</exception>\n<returncode>-1</returncode>\n<output>\n</output>"},
        {"turn": 4, "tool": "bash", "args": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"},
         "output": "diff --git a/x.py b/x.py\n", "thought": "Submit."},
    ]
    assert "\\u00e9" in (out / "django__django-1.jsonl").read_text(encoding="utf-8")  # ASCII escapes, as the corpus has them
    assert lines(out / "django__django-2.jsonl") == [
        {"turn": 1, "user": "Fix django__django-2.", "tool": "bash", "args": {"command": "python t.py"},
         "output": "<returncode>1</returncode>\n<output>\nboom\n</output>", "exit_code": 1}]
    assert labels(out) == {"django__django-1": {"resolved": True}, "django__django-2": {"resolved": False}}  # no report: false


def tracked_run(instance: str, n: int, steps: list[tuple[str, str, int]], model_calls: int) -> dict:
    return {"run_id": f"{instance}_run_0{n}", "task": f"Fix {instance}.", "exit_status": "Submitted", "n_calls": model_calls,
            "steps": [{"step_number": i + 1, "thought": "", "action": action, "observation": output, "returncode": code,
                       "raw_response": f"THOUGHT: step {i + 1}\n\n```bash\n{action}\n```"} for i, (action, output, code) in enumerate(steps)]}


def test_mini_swe_agent_tracked_renders_the_observation_the_model_read_and_the_submission_is_no_turn(tmp_path: Path) -> None:
    raw = tmp_path / "swe-bench"
    long = "x" * 12000
    write_json(raw / "results_llama_10" / "astropy__astropy-1.json", {"task_id": "astropy__astropy-1", "runs": [
        tracked_run("astropy__astropy-1", 1, [
            ("ls", "setup.py\n", 0),
            ("[ERROR]", "FORMAT ERROR: You provided 2 actions instead of exactly ONE. DO NOT SUBMIT", -1),
            ("[ERROR]", "The last command <command>sleep 99</command> timed out and has been killed.\nThe output was:", -1),
            ("cat big.log", long, 1)], model_calls=5)]})
    write_json(raw / "results_claude_10" / "astropy__astropy-1.json", {"task_id": "astropy__astropy-1", "runs": []})
    write_json(raw / "llama.llama-local-run1.json", {"resolved_ids": ["astropy__astropy-1"]})

    assert corpora_main(["mini-swe-agent-tracked", str(raw), str(tmp_path / "out")]) == 0

    out = tmp_path / "out" / "mini-llama-3.1-70b-astropy" / "run1"
    [ls, refused, timeout, big] = lines(out / "astropy__astropy-1.jsonl")
    assert ls == {"turn": 1, "user": "Fix astropy__astropy-1.", "tool": "bash", "args": {"command": "ls"},
                  "output": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>", "exit_code": 0, "thought": "step 1"}
    assert refused == {"turn": 2}  # a format error: the reply is lost, nothing ran
    assert timeout == {"turn": 3, "tool": "bash", "args": {"command": "sleep 99"},
                       "output": "The last command <command>sleep 99</command> timed out and has been killed.\nThe output was:"}
    assert big["exit_code"] == 1 and big["output"].startswith("<returncode>1</returncode>\n<warning>\nThe output of your last command was too long.")
    assert "<elided_chars>\n2000 characters elided\n</elided_chars>" in big["output"] and big["output"].endswith("x" * 5000 + "\n</output_tail>")
    assert labels(out) == {"astropy__astropy-1": {"resolved": True}}
    assert mini_swe_agent_tracked.observation(0, "") == "<returncode>0</returncode>\n<output>\n</output>"


def test_mini_swe_agent_tracked_refuses_a_run_whose_steps_and_model_calls_disagree(tmp_path: Path) -> None:
    raw = tmp_path / "swe-bench"
    write_json(raw / "results_claude_10" / "astropy__astropy-1.json", {"task_id": "astropy__astropy-1", "runs": [
        tracked_run("astropy__astropy-1", 1, [("ls", "", 0)], model_calls=1)]})
    with pytest.raises(SystemExit, match="1 steps but 1 model calls"):
        corpora_main(["mini-swe-agent-tracked", str(raw), str(tmp_path / "out")])


# SWE-agent ------------------------------------------------------------------------------------

def test_swe_agent_turns_are_the_model_calls_and_steps_without_an_action_are_left_out(tmp_path: Path) -> None:
    run_dir = tmp_path / "20250511_sweagent_lm_32b"
    write_json(run_dir / "results" / "results.json", {"resolved": ["astropy__astropy-1"]})
    xml = ("I will look.\n\n<function=execute_bash>\n<parameter=command>\ncat a.py\n</parameter>\n</function>",
           "<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/r/a.py</parameter>\n"
           "<parameter=view_range>[1, 5]</parameter>\n</function>")
    write_json(run_dir / "trajs" / "astropy__astropy-1" / "astropy__astropy-1.traj", {"trajectory": [
        {"action": "cat a.py", "response": xml[0], "observation": "café\r\n", "thought": "I will look."},
        {"action": "str_replace_editor view /r/a.py  --view_range 1 5", "response": xml[1], "observation": "1 x", "thought": ""},
        {"action": "", "response": "Exit due to cost limit", "observation": "Exited", "thought": ""},
    ]})
    write_json(run_dir / "trajs" / "astropy__astropy-2.traj", {  # a function-calling run, trajectory file at the top
        "history": [{"role": "user", "content": "fix it"},
                    {"role": "assistant", "action": "submit", "tool_calls": [{"function": {"name": "submit", "arguments": "{}"}}]}],
        "trajectory": [{"action": "", "response": "Let me think.", "observation": "", "thought": "Let me think."},
                       {"action": "submit", "response": "", "observation": "diff", "thought": "Submitting."}]})

    assert corpora_main(["swe-agent", str(run_dir), str(tmp_path / "out")]) == 0

    out = tmp_path / "out" / "20250511_sweagent_lm_32b"
    assert lines(out / "astropy__astropy-1.jsonl") == [
        {"turn": 1, "tool": "bash", "args": {"command": "cat a.py"}, "output": "café\r\n", "thought": "I will look."},
        {"turn": 2, "tool": "str_replace_editor", "args": {"command": "view", "path": "/r/a.py", "view_range": "[1, 5]"},
         "output": "1 x"},
    ]
    assert "caf\\u00e9" in (out / "astropy__astropy-1.jsonl").read_text(encoding="utf-8")  # ASCII escapes, as the corpus has them
    assert lines(out / "astropy__astropy-2.jsonl") == [{"turn": 1, "tool": "submit", "args": {}, "output": "diff", "thought": "Submitting."}]
    assert labels(out) == {"astropy__astropy-1": {"resolved": True}, "astropy__astropy-2": {"resolved": False}}


# AutoCodeRover --------------------------------------------------------------------------------

def acr_task(run_dir: Path, instance: str, last_answer: str) -> None:
    """One task folder: a round of two searches, a reply with no valid call, bug locations rejected
    then accepted, then two patch tries."""
    folder = run_dir / "applicable_patch" / f"{instance}_2024-04-06_12-00-00"
    write_json(folder / "meta.json", {"task_id": instance})
    (folder / "problem_statement.txt").write_text("The issue.", encoding="utf-8")
    thread = [
        {"role": "system", "content": "You are a software developer."},
        {"role": "user", "content": "<issue>The issue.</issue>"},
        {"role": "assistant", "content": "search A and f"},
        {"role": "user", "content": 'Result of search_class("A"):\nclass A: ...\n\nResult of search_method("f"):\nCould not find method f.\n\n'},
        {"role": "user", "content": "Let's analyze collected context first. ..."},
        {"role": "assistant", "content": "A is where it goes wrong."},
        {"role": "user", "content": "Based on your analysis, answer below questions: ..."},
        {"role": "assistant", "content": "- do we need more context:"},
        {"role": "user", "content": "The search API calls seem not valid. Please check the arguments you give carefully and try again."},
        {"role": "assistant", "content": "bug in f"},
        {"role": "user", "content": "The buggy locations is not precise. You may need to check whether the arguments are correct."},
        {"role": "assistant", "content": "bug in A.g"},
        {"role": "user", "content": "Here are the code in buggy locations:\nclass A: def g(self): ..."},
    ]
    write_json(folder / "conversation_round_9.json", [])  # an earlier round's file: 10 is the last one
    write_json(folder / "conversation_round_10.json", thread)
    write_json(folder / "tool_call_layers.json", [
        [{"func_name": "search_class", "arguments": {"class_name": "A"}, "call_ok": True},
         {"func_name": "search_method", "arguments": {"method_name": "f"}, "call_ok": False}], [], [], [], []])

    def proxy(answer: dict) -> list:
        return [[{"role": "user", "content": "extract"}, {"role": "assistant", "content": "not json"}],
                [{"role": "user", "content": "extract"}, {"role": "assistant", "content": json.dumps(answer)}]]
    write_json(folder / "agent_proxy_0.json", proxy({"API_calls": ['search_class("A")', 'search_method("f")']}))
    write_json(folder / "agent_proxy_1.json", proxy({}))
    write_json(folder / "agent_proxy_2.json", proxy({"bug_locations": [{"file": "a.py", "method": "f"}]}))
    write_json(folder / "agent_proxy_3.json", proxy({"bug_locations": [{"file": "a.py", "class": "A", "method": "g"}]}))
    write_json(folder / "extract_status.json", {"extract_status": ["APPLICABLE_PATCH", "APPLICABLE_PATCH"]})
    write_json(folder / "debug_agent_write_patch_2.json", [
        {"role": "system", "content": "You are a software developer."},
        {"role": "user", "content": "Write a patch for the issue, based on the retrieved context. ..."},
        {"role": "assistant", "content": "# modification 1\n<file>a.py</file>"},
        {"role": "user", "content": "Your edit could not be applied to the program. ..."},
        {"role": "assistant", "content": "# modification 1\n<file>a.py</file> (again)"},
        {"role": "user", "content": last_answer},
    ])


def test_autocoderover_one_line_per_search_call_one_turn_per_reply_and_the_analysis_is_no_turn(tmp_path: Path) -> None:
    results = tmp_path / "raw" / "results"
    for run_name in ("acr-run-1", "acr-run-2", "acr-run-3", "acr-val-only", "acr-val-sbfl"):
        write_json(results / run_name / "new_eval_results" / "report.json", {"resolved": []})
    write_json(results / "acr-run-1" / "new_eval_results" / "report.json", {"resolved": ["astropy__astropy-1"]})
    acr_task(results / "acr-run-1", "astropy__astropy-1", "Extracted a patch.")
    acr_task(results / "acr-val-only", "astropy__astropy-1", "Written an applicable patch, but it did not resolve the issue. ...")

    autocoderover.run(tmp_path / "raw", tmp_path / "out")

    lite = tmp_path / "out" / "autocoderover-gpt4-lite" / "acr-run-1"
    turns = lines(lite / "astropy__astropy-1.jsonl")
    assert turns[:5] == [
        {"turn": 1, "user": "The issue.", "tool": "search_class", "args": {"class_name": "A"}, "output": "class A: ...",
         "ok": True, "thought": "search A and f"},
        # the reply's second call: the same turn, the reply's text on its first line only
        {"turn": 1, "tool": "search_method", "args": {"method_name": "f"}, "output": "Could not find method f.", "ok": False},
        # no valid call: a turn without a tool, the raw reply as response (Agent-Zero's repeat check)
        {"turn": 2, "response": "- do we need more context:", "thought": "- do we need more context:"},
        {"turn": 3, "tool": "search_bug_locations", "args": {"bug_locations": [{"file": "a.py", "method": "f"}]},
         "output": "The buggy locations is not precise. You may need to check whether the arguments are correct.",
         "ok": False, "thought": "bug in f"},
        {"turn": 4, "tool": "search_bug_locations", "args": {"bug_locations": [{"class": "A", "file": "a.py", "method": "g"}]},
         "output": "Here are the code in buggy locations:\nclass A: def g(self): ...", "ok": True, "thought": "bug in A.g"},
    ]
    assert turns[5:] == [  # each patch try is another patch: its argument is the reply
        {"turn": 5, "tool": "write_patch", "args": {"patch": "# modification 1\n<file>a.py</file>"},
         "output": "Your edit could not be applied to the program. ...", "ok": True},
        {"turn": 6, "tool": "write_patch", "args": {"patch": "# modification 1\n<file>a.py</file> (again)"},
         "output": "Extracted a patch.", "ok": True},
    ]
    assert labels(lite) == {"astropy__astropy-1": {"resolved": True}}
    val = tmp_path / "out" / "autocoderover-gpt4-lite-val"
    assert lines(val / "acr-val-only" / "astropy__astropy-1.jsonl")[-1]["ok"] is False  # applicable, failed ACR's tests
    assert labels(val / "acr-val-only") == {"astropy__astropy-1": {"resolved": False}}
    assert labels(val / "acr-val-sbfl") == {}


# OpenHands: output.jsonl event histories ------------------------------------------------------

def ponyc_row() -> dict:
    def call(event_id: int, action: str, name: str, arguments: dict, thought: str) -> dict:
        return {"id": event_id, "source": "agent", "action": action, "args": {**arguments, "thought": thought, "blocking": False},
                "tool_call_metadata": {"function_name": name, "tool_call_id": f"t{event_id}", "model_response": {"choices": [
                    {"message": {"tool_calls": [{"id": f"t{event_id}", "function": {"name": name, "arguments": json.dumps(arguments)}}]}}]}}}
    return {"instance_id": "ponylang__ponyc-1", "history": [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands agent."}},
        {"id": 1, "source": "user", "action": "message", "message": "Fix the parser."},
        {"id": 2, "source": "user", "action": "recall", "args": {}},
        {"id": 3, "source": "environment", "observation": "recall", "cause": 2, "content": "Added workspace context"},
        call(4, "run", "execute_bash", {"command": "make"}, "Build it."),
        {"id": 5, "source": "agent", "observation": "run", "cause": 4, "content": "built",
         "extras": {"metadata": {"exit_code": 2, "prefix": "", "suffix": "\n[The command completed with exit code 2.]", "working_dir": "/w"}}},
        {"id": 6, "source": "agent", "observation": "error", "content": "Parameter 'command' is expected to be one of ['view']."},
        call(7, "edit", "str_replace_editor", {"command": "view", "path": "/w/a.pony"}, ""),
        {"id": 8, "source": "agent", "observation": "edit", "cause": 7, "content": "1 actor Main"},
        call(9, "finish", "finish", {"message": "Done."}, "Finished."),
    ]}


def test_openhands_examples_one_turn_per_action_as_the_model_called_it(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    (raw / openhands_examples.PONYC).parent.mkdir(parents=True)
    (raw / openhands_examples.PONYC).write_text(json.dumps(ponyc_row()) + "\n", encoding="utf-8")
    (raw / openhands_examples.RESOLVER).parent.mkdir(parents=True)
    (raw / openhands_examples.RESOLVER).write_text(json.dumps({
        "issue": {"owner": "neubig", "repo": "pr-viewer", "number": 5}, "success": True, "history": [
            {"content": "Add a license.", "action": "message"},
            {"command": "touch LICENSE", "thought": "Create it.", "action": "run"},
            {"content": "\r\nroot# ", "command_id": -1, "command": "touch LICENSE", "exit_code": 0, "observation": "run"},
            {"code": "print(1)", "thought": "", "action": "run_ipython"},
            {"content": "1", "code": "print(1)", "observation": "run_ipython"},
            {"outputs": {}, "thought": "Done.", "action": "finish"}]}) + "\n", encoding="utf-8")
    (raw / openhands_examples.PRONTOQA).parent.mkdir(parents=True)
    none = {"observation": "null", "content": "", "extras": {}}
    (raw / openhands_examples.PRONTOQA).write_text(json.dumps({"id": "ProntoQA_1", "test_result": {"result": False}, "history": [
        [{"source": "user", "action": "message", "args": {"content": "Is Max sour?"}}, none],
        [{"source": "agent", "action": "run_ipython", "args": {"code": "engine.run()", "thought": "Run it."}},
         {"source": "agent", "observation": "run_ipython", "content": "'A'", "extras": {"code": "engine.run()"}}],
        [{"source": "agent", "action": "message", "args": {"content": "The answer is A."}}, none],
        [{"source": "user", "action": "message", "args": {"content": "Please continue working on the task."}}, none],
        [{"source": "agent", "action": "finish", "args": {"outputs": {}, "thought": ""}}, none]]}) + "\n", encoding="utf-8")

    openhands_examples.run(raw, tmp_path / "out")

    ponyc = tmp_path / "out" / "multi-swe-bench-ponyc-llama-4-maverick"
    assert lines(ponyc / "ponylang__ponyc-1.jsonl") == [  # the refused call (the error observation) is no turn
        {"turn": 1, "user": "Fix the parser.", "tool": "execute_bash", "args": {"command": "make"},
         "output": "built\n[The command completed with exit code 2.]\n[Current working directory: /w]\n[Command finished with exit code 2]",
         "exit_code": 2, "thought": "Build it."},
        {"turn": 2, "tool": "str_replace_editor", "args": {"command": "view", "path": "/w/a.pony"}, "output": "1 actor Main"},
        {"turn": 3, "tool": "finish", "args": {"message": "Done."}, "thought": "Finished."},
    ]
    assert labels(ponyc) == {"ponylang__ponyc-1": {"resolved": None}}
    resolver = tmp_path / "out" / "resolver-mock-output"
    assert lines(resolver / "neubig__pr-viewer-5.jsonl") == [
        {"turn": 1, "user": "Add a license.", "tool": "execute_bash", "args": {"command": "touch LICENSE"}, "exit_code": 0,
         "output": "\r\nroot# \n[Command -1 finished with exit code 0]", "thought": "Create it."},
        {"turn": 2, "tool": "execute_ipython_cell", "args": {"code": "print(1)"}, "output": "1"},
        {"turn": 3, "tool": "finish", "args": {}, "thought": "Done."},
    ]
    assert labels(resolver) == {"neubig__pr-viewer-5": {"resolved": True}}
    prontoqa = tmp_path / "out" / "prontoqa-gpt-4o"
    assert lines(prontoqa / "ProntoQA_1.jsonl") == [
        {"turn": 1, "user": "Is Max sour?", "tool": "execute_ipython_cell", "args": {"code": "engine.run()"}, "output": "'A'",
         "thought": "Run it."},
        {"turn": 2, "thought": "The answer is A."},  # a message: a reply without a tool call
        {"turn": 3, "user": "Please continue working on the task.", "tool": "finish", "args": {}},
    ]
    assert labels(prontoqa) == {"ProntoQA_1": {"resolved": False}}


# OpenHands: LLM-call logs ---------------------------------------------------------------------

def test_openhands_completions_one_turn_per_logged_call_and_calls_refused_before_logging_are_left_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "raw" / openhands_completions.RUN_DIR / "llm_completions" / "astropy__astropy-1"
    (folder.parent / "astropy__astropy-2").mkdir(parents=True)  # an instance without a logged call: no session

    def model_reply(content: str, name: str | None = None, arguments: dict | None = None) -> dict:
        calls = [{"id": "c", "function": {"name": name, "arguments": json.dumps(arguments)}}] if name else []
        return {"role": "assistant", "content": content, "tool_calls": calls}

    conversation = [{"role": "system", "content": [{"type": "text", "text": "You are OpenHands agent."}]},
                    {"role": "user", "content": [{"type": "text", "text": "Fix the issue."}]}]
    steps = [  # (the reply, what the next call's conversation adds after it)
        (model_reply("<think></think>\nLook first.", "execute_bash", {"command": "ls", "security_risk": "LOW"}),
         [{"role": "tool", "content": "a.py\n[The command completed with exit code 0.]"},
          {"role": "user", "content": "Missing required parameters for function 'str_replace_editor': {'security_risk'}\n"
                                      "[Error occurred in processing last action]"}]),
        (model_reply("<think></think>", "task_tracker", {"command": "plan"}),
         [{"role": "user", "content": "Error: task_list is required for the plan command."}]),
        (model_reply("I think I am done."), [{"role": "user", "content": "Please continue working on the task."}]),
        (model_reply("", "finish", {"message": "Done."}), None),
    ]
    for when, (message, added) in zip(("100.5", "200", "300", "1000"), steps):  # by time, not by name: 1000 is last
        write_json(folder / f"__mnt__GLM-4.6-FP8-{when}.json", {
            "fncall_messages": conversation, "fncall_response": {"choices": [{"message": message}]}})
        conversation = conversation + [message] + (added or [])

    openhands_completions.run(tmp_path / "raw", tmp_path / "out")

    out = tmp_path / "out" / openhands_completions.RUN_NAME
    assert lines(out / "astropy__astropy-1.jsonl") == [
        {"turn": 1, "user": "Fix the issue.", "tool": "execute_bash", "args": {"command": "ls", "security_risk": "LOW"},
         "output": "a.py\n[The command completed with exit code 0.]", "exit_code": 0, "thought": "Look first."},
        # refused after it was logged: a turn, its output the error the model read
        {"turn": 2, "tool": "task_tracker", "args": {"command": "plan"}, "output": "Error: task_list is required for the plan command."},
        {"turn": 3, "thought": "I think I am done."},
        {"turn": 4, "user": "Please continue working on the task.", "tool": "finish", "args": {"message": "Done."}},
    ]
    assert labels(out) == {"astropy__astropy-1": {"resolved": None}}
    assert "refused calls: 1 logged (turns), 1 not logged (left out)" in capsys.readouterr().err
    assert openhands_completions.exit_code_of("x\n[Command finished with exit code -1]") is None


# Agent-Zero saved chats -----------------------------------------------------------------------

def a0_chat(chat_id: str, agents: list[list[dict]]) -> str:
    def history(messages: list[dict]) -> str:
        return json.dumps({"_cls": "History", "bulks": [], "topics": [], "current": {"_cls": "Topic", "messages": messages}})
    return json.dumps({"id": chat_id, "name": chat_id, "log": {"logs": []},
                       "agents": [{"number": n, "data": {}, "history": history(m)} for n, m in enumerate(agents)]})


def user(text: str) -> dict:
    return {"ai": False, "content": json.dumps({"user_message": text})}


def reply(tool: str, **args: Any) -> dict:
    return {"ai": True, "content": json.dumps({"thoughts": ["go"], "tool_name": tool, "tool_args": args})}


def result(tool: str, text: str) -> dict:
    return {"ai": False, "content": json.dumps({"tool_name": tool, "tool_result": text})}


def git(work: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", f"--git-dir={work / 'repo'}", f"--work-tree={work / 'tree'}",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def test_agent_zero_chats_takes_each_chats_last_version_and_reads_it_with_the_packs_reader(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "owner+backup"
    subprocess.run(["git", "init", "-q", "--bare", str(mirror / "repo")], check=True)
    chats = mirror / "tree" / "usr" / "chats"
    first = [user("list files"), reply("code_execution_tool", runtime="terminal", code="ls"), result("code_execution_tool", "a.py")]
    for name, agents in (("c1", [first]), ("c1_bloated_backup", [first]), ("c2", [[user("hi"), reply("response", text="hello")], []])):
        (chats / name).mkdir(parents=True)
        (chats / name / "chat.json").write_text(a0_chat(name.split("_")[0], agents), encoding="utf-8")
    git(mirror, "add", "-A")
    git(mirror, "commit", "-q", "-m", "first")
    (chats / "c1" / "chat.json").write_text(a0_chat("c1", [
        first + [reply("call_subordinate", message="check it")],
        [user("check it"), reply("code_execution_tool", runtime="terminal", code="pytest")]]), encoding="utf-8")
    (chats / "c2" / "chat.json").unlink()  # deleted later: still a session, at its last version
    git(mirror, "add", "-A")
    git(mirror, "commit", "-q", "-m", "second")

    raw, out = tmp_path / "raw", tmp_path / "out"
    agent_zero_chats.extract(tmp_path / "mirrors", raw, {"owner+backup": git(mirror, "rev-parse", "HEAD")})
    assert sorted(str(p.relative_to(raw)) for p in raw.rglob("chat.json")) == [
        "owner+backup/usr/chats/c1/chat.json", "owner+backup/usr/chats/c2/chat.json"]  # the backup copy is left out
    agent_zero_chats.run(raw, out)

    folder = out / "owner+backup"
    assert sorted(p.name for p in folder.iterdir()) == ["c1.jsonl", "c1__A1.jsonl", "c2.jsonl", "labels.json"]  # c2's agent 1: no turns
    ls = json.loads(first[1]["content"])
    assert lines(folder / "c1.jsonl") == [
        {"turn": 1, "user": "list files", "tool": "code_execution_tool", "args": ls["tool_args"], "output": "a.py",
         "response": first[1]["content"]},
        {"turn": 2, "tool": "call_subordinate", "args": {"message": "check it"},
         "response": reply("call_subordinate", message="check it")["content"]},
    ]
    assert [line["args"] for line in lines(folder / "c1__A1.jsonl")] == [{"runtime": "terminal", "code": "pytest"}]
    assert [line["tool"] for line in lines(folder / "c2.jsonl")] == ["response"]
    assert labels(folder) == {"c1": {"resolved": None}, "c1__A1": {"resolved": None}, "c2": {"resolved": None}}


# Claude Code runs ------------------------------------------------------------------------------

def claude_code_run(folder: Path, task: str, model: str, prompt: str, effort: str, blocks: list[dict], checks: list[bool]) -> None:
    folder.mkdir(parents=True)
    (folder / "metadata.yaml").write_text(f"run_id: run-1\ntask_id: {task}\nmodel: {model}\ntier: T0\n"
                                          f"started_at: '2026-05-24T21:13:50+00:00'\nprompt_label: {prompt}\n", encoding="utf-8")
    events = [{"event": "run_start", "task_id": task, "reasoning": {"effort": effort, "budget_tokens": None}}]
    events += [{"event": "turn", "role": "assistant", "tool_calls": [], "tool_returns": [], "model_output": "", **block} for block in blocks]
    events += [{"event": "scorer"}, {"event": "run_end"}]
    (folder / "trajectory.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdicts = [{"scorer_name": f"check_{n}", "pass": ok} for n, ok in enumerate(checks)]
    verdicts += [{"scorer_name": "latency_cost", "pass": False}]  # an efficiency scorer: not the task's outcome
    write_json(folder / "scores.json", {"task_id": task, "verdicts": verdicts})


def call(id_: str, name: str, **args: Any) -> dict:
    return {"tool_calls": [{"id": id_, "name": name, "args": args}]}


def returned(*results: tuple[str, bool, str]) -> dict:
    return {"role": "tool", "tool_returns": [{"tool_use_id": i, "is_error": error, "detail": text} for i, error, text in results]}


def test_claude_code_runs_one_line_per_call_a_reply_s_parallel_calls_one_turn_and_the_answer_a_last_turn(tmp_path: Path) -> None:
    raw = tmp_path / "results"
    claude_code_run(raw / "20260524T211350Z-run-1", "L0_005", "claude-sonnet-4-6", "null", "high", [
        {"model_output": "Reading both."}, {},  # a thinking block: empty in the log
        call("a", "Read", file_path="~/a.py"), call("b", "Bash", command="wc -l b.py", description="count"),
        returned(("b", True, "Exit code 1\nwc: b.py: No such file or directory"), ("a", True, "File does not exist.")),
        call("c", "Bash", command="ls"), returned(("c", False, "a.py")),
        {"model_output": "Done."}], checks=[True, True])
    claude_code_run(raw / "20260524T211400Z-run-2", "L0_001", "glm-4.6", "karpathy", "low", [
        {"model_output": "The answer is 4."}], checks=[False])

    assert corpora_main(["claude-code-runs", str(raw), str(tmp_path / "out")]) == 0

    source = tmp_path / "out" / "claude-code-ab-l0smoke"
    folder = source / "claude-sonnet-4-6-vanilla-high"
    assert lines(folder / "L0_005.jsonl") == [
        {"turn": 1, "tool": "Read", "args": {"file_path": "~/a.py"}, "output": "File does not exist.", "ok": False, "thought": "Reading both."},
        {"turn": 1, "tool": "Bash", "args": {"command": "wc -l b.py", "description": "count"},
         "output": "Exit code 1\nwc: b.py: No such file or directory", "ok": False, "exit_code": 1},
        {"turn": 2, "tool": "Bash", "args": {"command": "ls"}, "output": "a.py", "ok": True, "exit_code": 0},
        {"turn": 3, "thought": "Done."}]
    assert labels(folder) == {"L0_005": {"resolved": True}}  # the latency scorer's fail is no failure of the task
    assert lines(source / "glm-4.6-karpathy-low" / "L0_001.jsonl") == [{"turn": 1, "thought": "The answer is 4."}]
    assert labels(source / "glm-4.6-karpathy-low") == {"L0_001": {"resolved": False}}


def test_claude_code_runs_refuses_a_second_run_of_a_task_and_a_call_without_a_result(tmp_path: Path) -> None:
    raw = tmp_path / "results"
    for n in (1, 2):
        claude_code_run(raw / f"run-{n}", "L0_001", "glm-4.6", "null", "low", [{"model_output": "4"}], checks=[True])
    with pytest.raises(SystemExit, match="a second run of L0_001 in glm-4.6-vanilla-low"):
        corpora_main(["claude-code-runs", str(raw), str(tmp_path / "out")])
    raw = tmp_path / "results2"
    claude_code_run(raw / "run-1", "L0_002", "glm-4.6", "null", "low", [call("a", "Bash", command="ls")], checks=[True])
    with pytest.raises(SystemExit, match="1 calls without a result"):
        corpora_main(["claude-code-runs", str(raw), str(tmp_path / "out")])


# RepoLaunch ------------------------------------------------------------------------------------

def log_record(n: int, text: str) -> str:
    return f"2026-04-22 03:14:{n:02d},000 - {text}\n"


def ai(text: str) -> str:
    return f"\n{'=' * 34} Ai Message {'=' * 34}\n\n{text}\n\n -- <step_cost> input_tok: 1, output_tok: 1, cost_usd: nan </step_cost>\n"


def human(text: str) -> str:
    return f"\n{'=' * 32} Human Message {'=' * 33}\n\n{text}\n"


def test_repolaunch_one_turn_per_reply_through_setup_verify_and_retry_each_conversation_a_task(tmp_path: Path) -> None:
    raw = tmp_path / "archive"
    records = ["Using language: javascript", "Selected base image: node:22   -- <step_cost> input_tok: 1 </step_cost>",
               "----------Start setup conversation----------",
               ai("Thought: Install first.\nAction: <command>npm install</command>"),
               human("Observation:\nnpm install\nadded 659 packages\n\nroot@c1:/testbed $\n\nexit code: 0"),
               ai("I think it is done."),  # no action: RepoLaunch's format message, nothing ran
               human("Observation:\nPlease use the format."),
               ai("Thought: Done.\nAction: <stop></stop>"),
               "----------End setup conversation----------", "----------Start verify conversation----------",
               ai("Thought: Run the tests.\nAction: <command>npm test</command>"),
               human("Observation:\nnpm test\n1 failing\n\nroot@c1:/testbed $\n\nexit code: 1"),
               ai("Action: <issue>Tests fail.</issue>"), human("Observation:\ntests fail."),
               "----------End verify conversation----------", "----------Start setup conversation----------",
               ai("Thought: Again.\nAction: <search>mocha timeout</search>"), human("Observation:\n[]"),
               "----------End setup conversation----------"]
    for n, (instance, result) in enumerate((("org__a-1", {"completed": True}),
                                            ("org__b-2", {"completed": False, "exception": "Launch failed"}),
                                            ("org__c-3", {"completed": False, "exception": "Traceback (most recent call last): …"}),
                                            ("org__d-4", None))):
        folder = raw / "js" / "playground" / instance
        folder.mkdir(parents=True)
        log = "".join(log_record(i, text) for i, text in enumerate(records))
        if result is None:  # no result.json: the log's record of success decides
            log += log_record(50, "Setup completed successfully") + log_record(51, "Image repolaunch/dev:d committed successfully")
        (folder / "setup.log").write_text(log, encoding="utf-8")
        if result is not None:
            write_json(folder / "result.json", result)

    assert corpora_main(["repolaunch", str(raw), str(tmp_path / "out")]) == 0

    folder = tmp_path / "out" / "repolaunch-gpt-5.2" / "linux-js"
    [install, formatless, stop, test, issue, search] = lines(folder / "org__a-1.jsonl")
    assert install == {"turn": 1, "user": repolaunch.SETUP_TASK.format(base_image="node:22", shell="Bash", instance="org__a-1"),
                       "tool": "bash", "args": {"command": "npm install"},
                       "output": "npm install\nadded 659 packages\n\nroot@c1:/testbed $\n\nexit code: 0", "exit_code": 0,
                       "thought": "Install first."}
    assert formatless == {"turn": 2, "thought": "I think it is done."}
    assert stop == {"turn": 3, "tool": "stop", "args": {}, "thought": "Done."}
    assert test["user"] == repolaunch.VERIFY_TASK and test["exit_code"] == 1
    assert issue == {"turn": 5, "tool": "issue", "args": {"issue": "Tests fail."}, "output": "tests fail."}
    assert search == {"turn": 6, "user": repolaunch.RETRY, "tool": "search", "args": {"query": "mocha timeout"}, "output": "[]",
                      "thought": "Again."}
    assert labels(folder) == {"org__a-1": {"resolved": True}, "org__b-2": {"resolved": False}, "org__c-3": {"resolved": None},
                              "org__d-4": {"resolved": True}}


# replay ---------------------------------------------------------------------------------------

def test_a_converted_session_replays_with_the_real_sessions_reader(tmp_path: Path) -> None:
    run_dir = tmp_path / "raw" / "run_results" / "nano-output"
    write_json(run_dir / "nano_eval.json", {"resolved_ids": []})
    failing = ("```bash\npython t.py\n```", "<returncode>1</returncode>\n<output>\nTypeError: bad object\n</output>")
    write_json(run_dir / "django__django-1" / "django__django-1.traj.json",
               mini_trajectory("django__django-1", [failing] * 6, "LimitsExceeded", closing=True))
    mini_swe_agent.run(tmp_path / "raw", tmp_path / "out", ["mini-gpt-5-nano-swebench"])
    path = tmp_path / "out" / "mini-gpt-5-nano-swebench" / "nano-output" / "django__django-1.jsonl"

    header, turns, raw = read_session(path)
    assert header is None
    assert [t.turn for t in turns] == [1, 2, 3, 4, 5, 6] and turns[0].user == "Fix django__django-1."
    assert [r["exit_code"] for r in raw] == [1] * 6  # read by the bench, not passed to the replay
    _, _, events, _, _ = replay_session(path, {})
    assert any(e["anomaly"] == "loop" for e in events)  # the same failing command six times
