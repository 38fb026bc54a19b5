"""The output contract against the scripted OpenAI-compatible server: quirky but valid answers
are accepted, structured output falls back per endpoint, one repair round within the token
cap, cut-off answers and provider errors in a 200, and what happened in the run record,
the raw-answer log and ``a0org supervisors log``.
"""

from __future__ import annotations

import json

import pytest
from llm_server import model_config_for
from pack_commands import a0org
from pydantic import BaseModel, Field

from org.contracts.supervisor_outputs import CodeStyleOutput
from org.llm import ChatClient, ModelOutputInvalid, ModelUnavailable, deadline_after
from org.llm.answer import parse_answer
from org.llm_supervisors.answers import AnswerLog
from org.llm_supervisors.runner import SupervisorRunner
from org.standin.model_server import ProviderError, Reply, Status

ASK = [{"role": "system", "content": "You review code."}, {"role": "user", "content": "Review."}]


class Item(BaseModel):
    model_config = {"extra": "forbid"}
    kind: str = Field(pattern=r"^[a-z]+$")
    text: str = Field(max_length=40)


class Review(BaseModel):
    model_config = {"extra": "forbid"}
    items: list[Item] = Field(default_factory=list, max_length=3)
    summary: str = Field(max_length=60)


GOOD = {"items": [{"kind": "naming", "text": "use snake_case"}], "summary": "one finding"}
GOOD_TEXT = json.dumps(GOOD)


def ask(client: ChatClient, seconds: float = 10.0):
    return client.complete(ASK, schema=Review, deadline=deadline_after(seconds))


# =========================================================================== quirky but valid

QUIRKY = {
    "prose around it": f"Here is my review:\n{GOOD_TEXT}\nLet me know if you need more.",
    "a <think> preamble": f"<think>The user wants {{json}}. Let me check naming first.</think>\n{GOOD_TEXT}",
    "a fence on the same line": f"```json {GOOD_TEXT}```",
    "a fence after prose": f"Sure!\n```json\n{json.dumps(GOOD, indent=2)}\n```\nDone.",
    "a byte-order mark": "\ufeff" + GOOD_TEXT,
    "one extra field": json.dumps({**GOOD, "confidence": "high"}),
    "an over-long summary": json.dumps({**GOOD, "summary": "s" * 200}),
    "an extra field in an item": json.dumps({**GOOD, "items": [{"kind": "naming", "text": "x", "extra": 1}]}),
    "too many items": json.dumps({**GOOD, "items": GOOD["items"] * 5}),
}


@pytest.mark.parametrize("name", QUIRKY)
def test_a_quirky_but_valid_answer_is_accepted_without_a_repair_round(llm_server, llm_model, name):
    llm_server.script(Reply(QUIRKY[name]))
    result = ask(ChatClient(llm_model))
    assert result.parsed.items[0].kind == "naming" and result.repairs == 0 and len(llm_server.requests) == 1
    assert result.answers == (QUIRKY[name],)


def test_content_as_a_list_of_parts_is_read(llm_server, llm_model):
    llm_server.script(Reply([{"type": "text", "text": GOOD_TEXT[:20]}, {"type": "text", "text": GOOD_TEXT[20:]}]))
    assert ask(ChatClient(llm_model)).parsed == Review.model_validate(GOOD)


def test_what_was_done_to_an_answer_is_noted_per_field():
    answer = "\ufeff<think>hm</think>" + json.dumps({"summary": "s" * 100, "mood": "fine", "items": [{"kind": "naming", "text": "t" * 50}]})
    parsed = parse_answer(answer, Review)
    assert parsed.value.summary == "s" * 59 + "…" and parsed.value.items[0].text == "t" * 39 + "…"
    assert parsed.notes == ["byte-order mark removed", "reasoning block (<think>) removed",
                            "items.0.text cut from 50 to 40 characters", "summary cut from 100 to 60 characters",
                            "unknown field mood ignored"]


def test_identifiers_are_never_cut_or_changed_only_repaired():
    with pytest.raises(ModelOutputInvalid) as raised:
        parse_answer(json.dumps({"summary": "s", "items": [{"kind": "Naming Rules", "text": "x"}]}), Review)
    assert raised.value.errors == ["items.0.kind: String should match pattern '^[a-z]+$'"]


def test_the_supervisors_schemas_cut_free_text_but_not_document_names():
    draft = {"category": "conventions", "name": "errors", "title": "T" * 300, "rules": ["r" * 600]}
    parsed = parse_answer(json.dumps({"conventions_updated": [draft], "summary": "x" * 900}), CodeStyleOutput)
    assert len(parsed.value.summary) == 500 and len(parsed.value.conventions_updated[0].title) == 200
    with pytest.raises(ModelOutputInvalid, match="conventions_updated.0.name"):
        parse_answer(json.dumps({"conventions_updated": [{**draft, "name": "E" * 70}], "summary": "x"}), CodeStyleOutput)


def test_of_several_objects_the_first_that_validates_wins():
    text = 'The schema wants {"summary": ...}. Example: {"items": "none"}. Answer: ' + GOOD_TEXT
    assert parse_answer(text, Review).value == Review.model_validate(GOOD)


# =========================================================================== structured output


def test_structured_output_falls_back_by_itself_and_is_remembered_per_endpoint(llm_server, llm_model):
    llm_server.script(Status(400, "response_format json_schema is not supported"), Reply(GOOD_TEXT), Reply(GOOD_TEXT))
    first = ask(ChatClient(llm_model))
    assert [r.body.get("response_format", {}).get("type") for r in llm_server.requests] == ["json_schema", "json_object"]
    assert first.response_format == "json_object" and "asked again with json_object" in first.notes[0]
    second = ask(ChatClient(llm_model))  # a new run: no second refusal to pay for
    assert llm_server.requests[-1].body["response_format"] == {"type": "json_object"} and second.notes == ()


def test_an_endpoint_that_refuses_every_response_format_is_asked_without_one(llm_server, llm_model):
    llm_server.script(Status(400, "unknown field response_format"), Status(422, "unknown field response_format"), Reply(GOOD_TEXT))
    assert ask(ChatClient(llm_model)).response_format == "none"
    assert "response_format" not in llm_server.requests[-1].body


def test_a_request_refused_at_every_level_reports_the_last_refusal(llm_server, llm_model):
    llm_server.script(Status(400, "bad model"), Status(400, "bad model"), Status(400, "bad model"))
    with pytest.raises(ModelUnavailable, match="HTTP 400 .*bad model") as raised:
        ask(ChatClient(llm_model))
    assert raised.value.kind == "rejected" and len(llm_server.requests) == 3


# =========================================================================== repair round


def test_one_repair_round_sends_the_errors_back_and_its_answer_is_used(llm_server, llm_model):
    broken = json.dumps({"items": [{"kind": "Naming!", "text": "x"}]})
    llm_server.script(Reply(broken), Reply(GOOD_TEXT))
    result = ask(ChatClient(llm_model))
    assert result.parsed == Review.model_validate(GOOD) and result.repairs == 1 and result.answers == (broken, GOOD_TEXT)
    assert result.prompt_tokens == 240 and result.completion_tokens == 80  # both calls counted
    repair = llm_server.requests[1].body["messages"]
    assert repair[-2] == {"role": "assistant", "content": broken}
    assert "- items.0.kind: String should match pattern" in repair[-1]["content"]
    assert "- summary: Field required" in repair[-1]["content"]
    assert "repaired answer accepted" in result.notes


def test_no_repair_round_past_the_runs_token_cap(llm_server, llm_key):
    llm_server.script(Reply("no JSON here", prompt_tokens=900, completion_tokens=100), Reply(GOOD_TEXT))
    client = ChatClient(model_config_for(llm_server, max_tokens_per_request=500, max_tokens_per_run=1600))
    with pytest.raises(ModelOutputInvalid) as raised:
        ask(client)
    assert len(llm_server.requests) == 1 and raised.value.repairs == 0
    assert any(note.startswith("no repair round: the run's token cap (1000 of 1600 used") for note in raised.value.notes)


def test_a_cut_off_answer_is_asked_again_shorter_and_the_short_one_is_used(llm_server, llm_model):
    llm_server.script(Reply(GOOD_TEXT[:25], finish_reason="length"), Reply(GOOD_TEXT))
    result = ask(ChatClient(llm_model))
    assert result.repairs == 1 and "cut off at the 8000-token limit" in llm_server.requests[1].body["messages"][-1]["content"]


def test_a_complete_answer_marked_cut_off_is_used_and_noted(llm_server, llm_model):
    llm_server.script(Reply(GOOD_TEXT, finish_reason="length"))
    result = ask(ChatClient(llm_model))
    assert result.repairs == 0 and "cut off at max_tokens (8000), but the JSON object was complete" in result.notes


def test_the_default_answer_cap_holds_six_documents(llm_server, llm_model):
    llm_server.script(Reply(GOOD_TEXT))
    ask(ChatClient(llm_model))
    assert llm_server.requests[0].body["max_tokens"] == 8000


# =========================================================================== provider errors in a 200


def test_a_200_with_an_error_body_is_retried_like_a_5xx(llm_server, llm_model):
    llm_server.script(ProviderError(502, "provider returned error"), Reply(GOOD_TEXT))
    result = ask(ChatClient(llm_model))
    assert result.attempts == 2 and result.parsed == Review.model_validate(GOOD)


def test_a_200_with_a_final_error_code_is_not_retried(llm_server, llm_model):
    llm_server.script(ProviderError(401, "no auth credentials found"), Reply(GOOD_TEXT))
    with pytest.raises(ModelUnavailable, match="answered 200 with an error 401: no auth credentials found") as raised:
        ChatClient(model_config_for(llm_server, json_mode=False, api_key_env=None)).complete(
            ASK, schema=Review, deadline=deadline_after(5))
    assert raised.value.kind == "rejected" and len(llm_server.requests) == 1


def test_finish_reason_error_is_a_provider_failure_not_an_empty_answer(llm_server, llm_model):
    llm_server.script(Reply("", finish_reason="error", error={"message": "upstream timeout"}), Reply(GOOD_TEXT))
    result = ask(ChatClient(llm_model))
    assert result.attempts == 2 and result.repairs == 0


def test_provider_errors_that_never_end_give_up_with_the_reason(llm_server, llm_key):
    llm_server.script(*[ProviderError(503, "overloaded")] * 3)
    with pytest.raises(ModelUnavailable, match="answered 200 with an error 503: overloaded \\(gave up after 3 attempts\\)"):
        ask(ChatClient(model_config_for(llm_server, max_retries=2)))


# =========================================================================== the run record and the log

CONVENTION = {"category": "conventions", "name": "errors", "title": "Errors", "rules": ["Raise ToolError"]}


def write_config(home, server) -> None:
    import yaml
    from llm_server import KEY_ENV

    home.mkdir(parents=True, exist_ok=True)
    (home / "supervisors.yaml").write_text(yaml.safe_dump({
        "model": {"base_url": server.base_url, "model": "scripted/model", "api_key_env": KEY_ENV, "backoff_seconds": 0.01},
        "supervisors": {"design": {"enabled": False}, "internaliser": {"enabled": False}}}))


def test_what_happened_is_in_the_run_record_the_raw_answers_and_supervisors_log(tmp_path, llm_server, llm_key):
    home = tmp_path / "organizations"
    write_config(home, llm_server)
    broken = "Sure! " + json.dumps({"conventions_updated": [CONVENTION], "summary": "s", "directives": [{"type": "cleanup"}]})
    good = "<think>fix the directive</think>" + json.dumps({"conventions_updated": [CONVENTION], "summary": "fixed", "mood": "ok"})
    llm_server.script(Status(400, "json_schema unsupported"), Reply(broken), Reply(good))
    [run] = SupervisorRunner(home).run_now()
    assert run.outcome == "applied" and run.repairs == 1 and run.response_format == "json_object"
    assert run.answer_notes[0].startswith("the endpoint refused response_format json_schema (HTTP 400")
    assert "repaired answer accepted" in run.answer_notes and "unknown field mood ignored" in run.answer_notes
    [kept] = AnswerLog(home / "supervisors" / "answers.jsonl").recent()
    assert kept.run_id == run.run_id and kept.answers == [broken, good]
    shown = a0org("supervisors", "log", "--raw", "--org-dir", home)
    assert shown.returncode == 0, shown.stderr
    assert "answer (json_object): the endpoint refused response_format json_schema" in shown.stdout
    assert f"raw answer 1 of run {run.run_id}:" in shown.stdout and "      | Sure! {" in shown.stdout
    assert "      | <think>fix the directive</think>" in shown.stdout


def test_a_discarded_answer_is_kept_for_inspection(tmp_path, llm_server, llm_key):
    home = tmp_path / "organizations"
    write_config(home, llm_server)
    llm_server.script(Reply("I could not decide."), Reply("Still no JSON, sorry."))
    [run] = SupervisorRunner(home).run_now()
    assert run.outcome == "discarded" and run.repairs == 1
    [kept] = AnswerLog(home / "supervisors" / "answers.jsonl").recent()
    assert kept.answers == ["I could not decide.", "Still no JSON, sorry."]


# =========================================================================== which object, and answers kept whatever the failure


def test_the_object_valid_against_the_schema_wins_not_a_quoted_example_before_it():
    example = '{"summary": "Brief description"}'  # valid too, as the schema's other fields have defaults
    text = f"The format is {example}, for example. My answer:\n{GOOD_TEXT}\nThat is all."
    parsed = parse_answer(text, Review)
    assert parsed.value == Review.model_validate(GOOD)
    assert "the best of 2 valid JSON objects in the answer" in parsed.notes
    tolerated = json.dumps({**GOOD, "mood": "fine"})  # needs tolerance (an unknown field): a strictly valid one goes first
    assert parse_answer(f"{tolerated} or rather {GOOD_TEXT}", Review).value == Review.model_validate(GOOD)


def test_deeply_nested_json_is_an_invalid_answer_never_an_exception():
    deep = '{"summary": "s", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ModelOutputInvalid) as raised:
        parse_answer(deep, Review)
    assert raised.value.raw_text == deep


def test_a_deeply_nested_answer_is_discarded_and_kept_with_its_tokens(tmp_path, llm_server, llm_key):
    home = tmp_path / "organizations"
    write_config(home, llm_server)
    deep = "[" * 50_000 + "]" * 50_000
    llm_server.script(Reply(deep, prompt_tokens=300, completion_tokens=70), Reply(deep, prompt_tokens=310, completion_tokens=70))
    [run] = SupervisorRunner(home).run_now()
    assert run.outcome == "discarded" and (run.prompt_tokens, run.completion_tokens) == (610, 140)
    [kept] = AnswerLog(home / "supervisors" / "answers.jsonl").recent()
    assert kept.answers == [deep[:100_000]] * 2


def test_an_answer_over_4_mb_is_asked_once_its_tokens_counted_and_its_start_kept(tmp_path, llm_server, llm_key):
    home = tmp_path / "organizations"
    write_config(home, llm_server)
    llm_server.script(Reply("x" * 4_500_000), Reply(GOOD_TEXT))
    [run] = SupervisorRunner(home).run_now()
    assert len(llm_server.requests) == 1  # never retried: it was answered, and paid for
    assert run.outcome == "discarded" and "larger than 4,000,000 bytes" in run.reason
    assert run.prompt_tokens > 0 and run.completion_tokens == 8000  # max_tokens_per_request: what it can have cost
    [kept] = AnswerLog(home / "supervisors" / "answers.jsonl").recent()
    assert kept.answers[0].startswith('{"id"') and len(kept.answers[0]) == 100_000


def test_a_json_escaped_key_in_a_raw_answer_is_redacted(tmp_path, llm_server, llm_key):
    home = tmp_path / "organizations"
    write_config(home, llm_server)
    escaped = "\\u0073k_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    llm_server.script(Reply('{"summary": "key ' + escaped + '", "conventions_updated": []}'))
    [run] = SupervisorRunner(home).run_now()
    assert run.outcome == "applied"
    text = (home / "supervisors" / "answers.jsonl").read_text()
    assert "4eC39HqLyjWDarjtT1zdp7dc" not in text and "[REDACTED]" in text
