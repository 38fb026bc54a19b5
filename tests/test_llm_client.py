"""The supervisors' model client against a real HTTP server on 127.0.0.1 that answers from a script.

Covers the answer (JSON mode, fences, malformed and off-schema output), retries (429 with
Retry-After, 5xx, dropped connections, an endpoint that is down), what is never retried,
the run's deadline against slow servers, the token cap, the daily budget and its ledger,
the key staying out of logs, exceptions and files, and the config file's validation.
"""

from __future__ import annotations

import json
import logging
import random
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Literal

import pytest
import yaml
from llm_server import KEY_ENV, TEST_KEY, model_config_for
from pydantic import BaseModel, Field

from org.contracts.supervisors import ModelConfig, SupervisorsConfig
from org.kernel.paths import OrganizationLayout
from org.llm import (
    ChatClient,
    ModelOutputInvalid,
    ModelUnavailable,
    UsageLedger,
    config_path,
    deadline_after,
    load_config,
    utc_day,
)
from org.llm.answer import extract_json_text
from org.llm.transport import Clock, parse_retry_after
from org.standin.model_server import Drop, Reply, ScriptedServer, Slow, Status

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "roles" / "organizations" / "supervisors.example.yaml"
ASK = [{"role": "system", "content": "You review code."}, {"role": "user", "content": "Review the last five tasks."}]


@pytest.fixture
def llm_server(llm_server_both_ways):
    """The model client is where connection handling lives: each test here runs against a
    server that keeps connections open and one that closes them."""
    return llm_server_both_ways


class Directive(BaseModel):
    type: Literal["functional", "cleanup"]
    description: str = Field(max_length=200)
    priority: Literal["critical", "normal", "low"] = "low"


class Findings(BaseModel):
    directives: list[Directive] = []
    summary: str


GOOD = {"directives": [{"type": "cleanup", "description": "Use pathlib in org/io.py"}], "summary": "1 inconsistency"}


def ask(client: ChatClient, seconds: float = 10.0, **options):
    return client.complete(ASK, schema=Findings, deadline=client.clock.monotonic() + seconds, **options)


class VirtualClock(Clock):
    """Time that moves only when the client waits: every wait is recorded, and no result
    depends on how fast the machine answers."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def ledger(tmp_path) -> UsageLedger:
    return UsageLedger.for_organizations(tmp_path / "organizations")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# =========================================================================== the answer


def test_a_valid_answer_is_parsed_and_the_request_is_openai_shaped(llm_server, llm_model, ledger):
    llm_server.script(Reply.valid(Findings, GOOD, prompt_tokens=300, completion_tokens=60))
    result = ask(ChatClient(llm_model, ledger, supervisor="code_style"), max_tokens=500)

    assert result.parsed == Findings.model_validate(GOOD)
    assert (result.prompt_tokens, result.completion_tokens, result.total_tokens, result.attempts) == (300, 60, 360, 1)
    assert result.model == "scripted-model" and result.seconds > 0
    [request] = llm_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert request.headers["content-type"] == "application/json"
    body = request.body
    assert body["model"] == "scripted/model" and body["max_tokens"] == 500 and body["stream"] is False
    assert body["response_format"]["type"] == "json_schema"  # structured output first
    assert body["response_format"]["json_schema"]["name"] == "Findings"
    assert body["response_format"]["json_schema"]["schema"] == Findings.model_json_schema()
    system, user = body["messages"]
    assert system["role"] == "system" and system["content"].startswith("You review code.")
    assert "exactly one JSON object" in system["content"] and "JSON Schema Findings given as the response format" in system["content"]
    assert "properties" not in json.dumps(body["messages"])  # the schema is sent once: in the response format, not the prompt too
    assert user == ASK[1]


def test_when_the_endpoint_refuses_json_schema_the_schema_goes_into_the_prompt_once(llm_server, llm_model):
    llm_server.script(Status(400, "json_schema unsupported"), Reply.valid(Findings, GOOD))
    ask(ChatClient(llm_model))
    refused, answered = llm_server.requests
    schema = json.dumps(Findings.model_json_schema(), separators=(",", ":"), sort_keys=True)
    assert refused.body["response_format"]["type"] == "json_schema" and "properties" not in json.dumps(refused.body["messages"])
    assert answered.body["response_format"] == {"type": "json_object"}
    assert json.dumps(answered.body["messages"]).count(json.dumps(schema)[1:-1]) == 1  # once, in the prompt


def test_without_json_mode_the_prompt_still_asks_for_json(llm_server, llm_key):
    llm_server.script(Reply.valid(Findings, GOOD))
    ask(ChatClient(model_config_for(llm_server, json_mode=False)))
    body = llm_server.requests[0].body
    assert "response_format" not in body
    assert "exactly one JSON object" in body["messages"][0]["content"]


def test_a_system_message_is_added_when_the_caller_has_none(llm_server, llm_model):
    llm_server.script(Reply.valid(Findings, GOOD))
    ChatClient(llm_model).complete([{"role": "user", "content": "hi"}], schema=Findings, deadline=deadline_after(5))
    messages = llm_server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"] and "JSON Schema" in messages[0]["content"]


def test_a_fenced_json_block_is_accepted(llm_server, llm_model):
    llm_server.script(Reply.of(GOOD, fenced=True))
    assert ask(ChatClient(llm_model)).parsed.summary == "1 inconsistency"
    assert extract_json_text('Sure.\n```JSON\n{"a": 1}\n```\nDone.') == '{"a": 1}'
    assert extract_json_text('```\n{"a": 1}```') == '{"a": 1}'


@pytest.mark.parametrize("content, reason", [
    ('{"directives": [], "summary": "cut', "not valid JSON"),
    ("The code looks fine to me.", "not valid JSON"),
    ("", "the answer is empty"),
    ("[1, 2]", "expected a JSON object, found list"),
])
def test_malformed_output_gets_one_repair_round_then_is_refused_whole(llm_server, llm_model, ledger, content, reason):
    llm_server.script(Reply(content), Reply(content), Reply.valid(Findings, GOOD))
    client = ChatClient(llm_model, ledger, supervisor="design")
    with pytest.raises(ModelOutputInvalid) as raised:
        ask(client)
    assert reason in raised.value.reason and len(raised.value.reason) < 120
    assert raised.value.raw_text == content and raised.value.answers == [content, content] and raised.value.repairs == 1
    assert len(llm_server.requests) == 2 and llm_server.pending == 1  # one repair round, no more
    assert ledger.today().calls == 2 and client.run_calls == 2  # the tokens were paid for all the same
    repair = llm_server.requests[1].body["messages"]
    sent = llm_server.requests[0].body["messages"]
    assert repair[:len(sent)] == sent and reason in repair[-1]["content"]
    assert repair[len(sent):-1] == ([{"role": "assistant", "content": content}] if content else [])


def test_output_that_breaks_the_schema_names_the_field(llm_server, llm_model):
    broken = {"directives": [{"type": "refactor", "description": "x"}, {"type": "cleanup"}], "summary": 3}
    llm_server.script(Reply.of(broken), Reply.of(broken))
    with pytest.raises(ModelOutputInvalid) as raised:
        ask(ChatClient(llm_model))
    assert raised.value.reason.startswith("does not match Findings: directives.0.type: Input should be 'functional' or 'cleanup'")
    assert raised.value.reason.endswith("(and 2 more)")
    sent_back = llm_server.requests[1].body["messages"][-1]["content"]
    assert "- directives.1.description: Field required" in sent_back and "- summary: Input should be a valid string" in sent_back


def test_an_answer_cut_off_at_max_tokens_is_asked_again_shorter(llm_server, llm_model):
    llm_server.script(Reply(json.dumps(GOOD)[:40], finish_reason="length"), Reply(json.dumps(GOOD)[:30], finish_reason="length"))
    with pytest.raises(ModelOutputInvalid, match=r"cut off at max_tokens \(8000\)") as raised:
        ask(ChatClient(llm_model))
    repair = llm_server.requests[1].body["messages"]
    assert repair[-1]["role"] == "user" and "cut off at the 8000-token limit" in repair[-1]["content"]
    assert all(m["role"] != "assistant" for m in repair)  # the cut-off text is not paid for twice
    assert raised.value.repairs == 1


def test_max_tokens_never_exceeds_the_configured_request_limit(llm_server, llm_key):
    llm_server.script(Reply.valid(Findings, GOOD), Reply.valid(Findings, GOOD))
    client = ChatClient(model_config_for(llm_server, max_tokens_per_request=300))
    ask(client, max_tokens=5000)
    ask(client)
    assert [r.body["max_tokens"] for r in llm_server.requests] == [300, 300]


# =========================================================================== retries


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_are_retried(llm_server, llm_model, status):
    llm_server.script(Status(status), Status(status), Reply.valid(Findings, GOOD))
    result = ask(ChatClient(llm_model))
    assert result.attempts == 3 and len(llm_server.requests) == 3


def test_retries_stop_after_max_retries(llm_server, llm_key):
    llm_server.script(*[Status(503, "overloaded")] * 5)
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server, max_retries=2)))
    assert raised.value.kind == "unreachable"
    assert raised.value.reason == f"HTTP 503 from 127.0.0.1:{llm_server.port}: overloaded (gave up after 3 attempts)"
    assert len(llm_server.requests) == 3 and llm_server.pending == 2


def test_giving_up_names_the_first_failure_when_it_differs_from_the_last(llm_server, llm_key):
    """A lost first answer shows as the cause: later attempts only met an empty script."""
    llm_server.script(Drop(), Status(503, "overloaded"), Status(503, "overloaded"))
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server, max_retries=2)))
    reason = raised.value.reason
    assert reason.startswith(f"HTTP 503 from 127.0.0.1:{llm_server.port}: overloaded (gave up after 3 attempts; the first: ")
    assert "cannot reach" in reason.split("the first: ")[1]


def test_backoff_grows_between_attempts(llm_server, llm_key):
    """0.1 s doubling, jitter 0.5x-1.5x: three pauses take at least 0.05 + 0.1 + 0.2 s."""
    llm_server.script(Status(500), Status(500), Status(500), Reply.valid(Findings, GOOD))
    ask(ChatClient(model_config_for(llm_server, backoff_seconds=0.1)))
    times = [r.received_at for r in llm_server.requests]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 0.2, gaps


def test_429_is_retried_after_its_retry_after(llm_server, llm_model):
    llm_server.script(Status(429, "rate limited", retry_after=0.6), Reply.valid(Findings, GOOD))
    result = ask(ChatClient(llm_model))
    first, second = llm_server.requests
    assert result.attempts == 2
    assert second.received_at - first.received_at >= 0.6  # not the 0.01 s backoff


def test_a_retry_after_past_the_deadline_ends_the_call_at_once(llm_server, llm_model):
    llm_server.script(Status(429, retry_after=30), Reply.valid(Findings, GOOD))
    clock = VirtualClock()
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(llm_model, clock=clock), seconds=3)
    assert clock.waits == []  # it did not wait for a retry it had no time for
    assert raised.value.kind == "deadline" and "HTTP 429" in raised.value.reason
    assert len(llm_server.requests) == 1


def test_retry_after_is_read_as_seconds_or_an_http_date():
    now = time.time()
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(format_datetime(datetime.fromtimestamp(now + 20, timezone.utc), usegmt=True), now=now) == pytest.approx(20, abs=1)
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_a_dropped_connection_is_retried(llm_server, llm_model):
    llm_server.script(Drop(), Reply.valid(Findings, GOOD))
    assert ask(ChatClient(llm_model)).attempts == 2


def test_a_connection_dropped_every_time_makes_the_model_unavailable(llm_server, llm_key):
    llm_server.script(Drop(), Drop(), Drop())
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server, max_retries=2)))
    assert raised.value.kind == "unreachable" and "gave up after 3 attempts" in raised.value.reason
    assert "RemoteDisconnected" in raised.value.reason or "Connection" in raised.value.reason


def test_an_endpoint_that_is_down_is_unavailable(llm_key):
    port = free_port()
    config = ModelConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key_env=KEY_ENV, max_retries=1,
                         backoff_seconds=0.01)
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(config))
    assert raised.value.kind == "unreachable"
    assert raised.value.reason.startswith(f"cannot reach 127.0.0.1:{port}: ConnectionRefusedError")


@pytest.mark.parametrize("status, kind, hint", [
    (400, "rejected", ""),
    (401, "rejected", f"(check the key in {KEY_ENV})"),
    (403, "rejected", f"(check the key in {KEY_ENV})"),
    (404, "rejected", "(check base_url and model)"),
    (402, "budget", "(the account is out of credit)"),
])
def test_other_client_errors_are_not_retried(llm_server, llm_key, status, kind, hint):
    llm_server.script(Status(status, "nope"), Reply.valid(Findings, GOOD))
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server, json_mode=False)))
    assert raised.value.kind == kind
    assert raised.value.reason == f"HTTP {status} from 127.0.0.1:{llm_server.port}: nope" + (f" {hint}" if hint else "")
    assert len(llm_server.requests) == 1


def test_an_empty_script_answers_500_so_extra_calls_show(llm_server, llm_key):
    with pytest.raises(ModelUnavailable, match="the script has no more answers"):
        ask(ChatClient(model_config_for(llm_server, max_retries=0)))


# =========================================================================== deadline


# A stalled server holds its answer for STALL seconds; the calls below have a deadline of well
# under a second, so a call that ends in less than STALL / 2 was cut by its deadline, however
# loaded the machine (the server stops stalling when the test ends).
STALL = 120.0


def test_a_slow_server_cannot_hold_the_call_past_the_deadline(llm_server, llm_model):
    llm_server.script(Slow(STALL, Reply.valid(Findings, GOOD)))
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(llm_model), seconds=0.5)
    elapsed = time.monotonic() - started
    assert raised.value.kind == "deadline" and elapsed < STALL / 2, elapsed


def test_a_server_that_stalls_mid_answer_cannot_hold_the_call_past_the_deadline(llm_server, llm_model):
    llm_server.script(Slow(STALL, Reply.valid(Findings, GOOD), stage="body"))
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(llm_model), seconds=0.5)
    assert raised.value.kind == "deadline" and time.monotonic() - started < STALL / 2


def test_a_slow_attempt_times_out_and_the_retry_succeeds(llm_server, llm_key):
    llm_server.script(Slow(STALL, Reply.valid(Findings, GOOD)), Reply.valid(Findings, GOOD))
    result = ask(ChatClient(model_config_for(llm_server, timeout_seconds=0.3)), seconds=STALL / 2)
    assert result.attempts == 2  # the first attempt was cut at its timeout, well before the deadline


def test_retries_never_run_past_the_deadline(llm_server, llm_key):
    llm_server.script(*[Status(503)] * 10)
    clock = VirtualClock()
    deadline = clock.now + 1.0
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server, max_retries=10, backoff_seconds=0.2), clock=clock), seconds=1.0)
    assert raised.value.kind == "deadline" and "no time left for another attempt" in raised.value.reason
    assert len(clock.waits) >= 1 and len(llm_server.requests) == len(clock.waits) + 1  # it did retry
    assert clock.now <= deadline  # and never waited past the deadline


def test_a_deadline_already_passed_sends_nothing(llm_server, llm_model):
    with pytest.raises(ModelUnavailable) as raised:
        ChatClient(llm_model).complete(ASK, schema=Findings, deadline=time.monotonic() - 1)
    assert raised.value.kind == "deadline" and llm_server.requests == []


# =========================================================================== key


def test_no_key_means_unavailable_and_nothing_is_sent(llm_server, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server)))
    assert raised.value.kind == "no_key"
    assert raised.value.reason == f"no API key: the environment variable {KEY_ENV} is not set"
    assert llm_server.requests == []


def test_the_key_is_read_at_call_time(llm_server, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    client = ChatClient(model_config_for(llm_server))
    with pytest.raises(ModelUnavailable):
        ask(client)
    monkeypatch.setenv(KEY_ENV, "sk-later")
    llm_server.script(Reply.valid(Findings, GOOD))
    ask(client)
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-later"


def test_a_keyless_local_endpoint_gets_no_authorization_header(llm_server):
    llm_server.script(Reply.valid(Findings, GOOD))
    ask(ChatClient(model_config_for(llm_server, api_key_env=None)))
    assert "authorization" not in llm_server.requests[0].headers


def test_a_key_that_cannot_be_a_header_is_refused_without_echoing_it(llm_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-abc\r\nX-Evil: 1")
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server)))
    assert raised.value.kind == "no_key" and "sk-abc" not in str(raised.value)
    assert llm_server.requests == []


def test_the_key_never_reaches_logs_exceptions_or_files(llm_server, llm_model, tmp_path, caplog):
    """Every path through the client, with an endpoint that even echoes the key in its errors."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="a0org")
    ledger = UsageLedger.for_organizations(tmp_path / "organizations")
    client = ChatClient(llm_model, ledger, supervisor="internaliser")
    llm_server.script(
        Status(503, f"upstream said: invalid key {TEST_KEY}"), Drop(), Reply.valid(Findings, GOOD, cost=0.01),  # retried
        Reply("{broken"), Reply(f"{{broken again {TEST_KEY}"),                                                  # malformed
        Reply.of({"summary": 1}), Reply.of({"summary": 2}),                                                     # off-schema
        Status(401, f"User not found for key {TEST_KEY}"),                                                     # final
    )
    outcomes: list[object] = [ask(client)]
    for _ in range(3):
        with pytest.raises((ModelOutputInvalid, ModelUnavailable)) as raised:
            ask(client)
        outcomes.append(raised.value)
    assert "[redacted]" in outcomes[-1].reason
    texts = [caplog.text, *(repr(o) for o in outcomes), *(str(o) for o in outcomes),
             *(getattr(o, "reason", "") for o in outcomes)]
    texts += [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert len(llm_server.requests) == 8 and all(r.headers["authorization"] == f"Bearer {TEST_KEY}" for r in llm_server.requests)
    assert "retry 1 of 3" in caplog.text  # the log was captured, and it held the retries
    assert [t for t in texts if TEST_KEY in t] == []


# =========================================================================== token cap


def test_the_token_cap_refuses_the_call_that_would_pass_it(llm_server, llm_key):
    llm_server.script(*[Reply.valid(Findings, GOOD, prompt_tokens=400, completion_tokens=100)] * 3)
    client = ChatClient(model_config_for(llm_server, max_tokens_per_request=500, max_tokens_per_run=1600))
    ask(client)
    assert client.run_tokens == 500
    ask(client)  # 1000 used; this one may need ~(prompt + 500)
    with pytest.raises(ModelUnavailable) as raised:
        ask(client)
    assert raised.value.kind == "token_cap"
    assert raised.value.reason.startswith("the run's token cap: 1000 of 1600 tokens used, and this call may need")
    assert len(llm_server.requests) == 2


def test_a_single_call_larger_than_the_cap_is_not_sent(llm_server, llm_key):
    client = ChatClient(model_config_for(llm_server, max_tokens_per_run=300, max_tokens_per_request=200))
    with pytest.raises(ModelUnavailable) as raised:
        client.complete([{"role": "user", "content": "x" * 2000}], schema=Findings, deadline=deadline_after(5))
    assert raised.value.kind == "token_cap" and llm_server.requests == []


def test_without_usage_in_the_answer_tokens_are_estimated(llm_server, llm_model):
    llm_server.script(Reply.valid(Findings, GOOD, usage=False))
    result = ask(ChatClient(llm_model))
    assert result.prompt_tokens > 50 and result.completion_tokens == -(-len(result.raw_text) // 4)


# =========================================================================== budget and ledger


def test_openrouter_cost_is_used_and_the_budget_stops_the_day(llm_server, llm_key, ledger):
    llm_server.script(*[Reply.valid(Findings, GOOD, cost=0.3)] * 5)
    client = ChatClient(model_config_for(llm_server, daily_budget_usd=0.5), ledger, supervisor="code_style")
    assert ask(client).cost_usd == 0.3
    ask(client)  # 0.3 spent, under 0.5: allowed, and it overspends by at most one call
    with pytest.raises(ModelUnavailable) as raised:
        ask(client)
    assert raised.value.kind == "budget"
    assert raised.value.reason == "daily budget spent: $0.6000 of $0.50 used today (UTC)"
    assert len(llm_server.requests) == 2
    assert ledger.spent_today() == pytest.approx(0.6)


def test_cost_from_configured_prices_when_the_endpoint_reports_none(llm_server, llm_key, ledger):
    llm_server.script(Reply.valid(Findings, GOOD, prompt_tokens=10_000, completion_tokens=2_000))
    config = model_config_for(llm_server, price_per_million_input=3.0, price_per_million_output=15.0)
    result = ask(ChatClient(config, ledger))
    assert result.cost_usd == pytest.approx(0.03 + 0.03)
    assert ledger.totals().cost_usd == pytest.approx(0.06)


def test_a_call_whose_worst_case_cost_passes_the_budget_is_refused(llm_server, llm_key, ledger):
    ledger.record(supervisor="design", prompt_tokens=0, completion_tokens=0, cost_usd=0.95)
    config = model_config_for(llm_server, daily_budget_usd=1.0, price_per_million_output=100.0)  # 2000 tokens: $0.20
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(config, ledger))
    assert raised.value.kind == "budget" and llm_server.requests == []


def test_the_budget_is_per_utc_day_and_survives_a_restart(tmp_path, llm_server, llm_key):
    path = tmp_path / "organizations" / "supervisors" / "usage.json"
    yesterday = datetime.now(timezone.utc) - timedelta(days=1)
    UsageLedger(path).record(supervisor="design", prompt_tokens=10, completion_tokens=5, cost_usd=5.0, now=yesterday)
    UsageLedger(path).record(supervisor="design", prompt_tokens=10, completion_tokens=5, cost_usd=0.4)
    reopened = UsageLedger(path)  # another process, or Agent-Zero restarted
    assert reopened.spent_today() == pytest.approx(0.4)
    assert reopened.day(utc_day(yesterday)).cost_usd == 5.0
    assert reopened.totals().cost_usd == pytest.approx(5.4)
    llm_server.script(Reply.valid(Findings, GOOD, cost=0.0))
    ask(ChatClient(model_config_for(llm_server, daily_budget_usd=1.0), reopened))  # yesterday's $5 does not count
    with pytest.raises(ModelUnavailable, match="daily budget spent"):
        ask(ChatClient(model_config_for(llm_server, daily_budget_usd=0.4), UsageLedger(path)))


def test_the_ledger_file_has_days_totals_and_supervisors(ledger):
    day = datetime(2026, 3, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5)))  # 04:30 UTC on 2 March
    ledger.record(supervisor="code_style", prompt_tokens=100, completion_tokens=20, cost_usd=0.01, now=day)
    ledger.record(supervisor="design", prompt_tokens=200, completion_tokens=40, cost_usd=0.02, now=day)
    ledger.record(supervisor="code_style", prompt_tokens=1, completion_tokens=1, cost_usd=0.0, now=day + timedelta(days=1))
    data = json.loads(ledger.path.read_text())
    assert sorted(data["days"]) == ["2026-03-02", "2026-03-03"]
    first = data["days"]["2026-03-02"]
    assert (first["calls"], first["prompt_tokens"], first["completion_tokens"]) == (2, 300, 60)
    assert first["cost_usd"] == pytest.approx(0.03)
    assert first["by_supervisor"]["design"] == {"calls": 1, "prompt_tokens": 200, "completion_tokens": 40, "cost_usd": 0.02}
    assert data["totals"]["calls"] == 3 and data["totals"]["by_supervisor"]["code_style"]["calls"] == 2
    assert ledger.totals().tokens == 362
    assert [p.name for p in ledger.path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_concurrent_records_are_all_counted(ledger):
    def work(name: str) -> None:
        for _ in range(15):
            ledger.record(supervisor=name, prompt_tokens=10, completion_tokens=1, cost_usd=0.001)

    threads = [threading.Thread(target=work, args=(f"s{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    totals = UsageLedger(ledger.path).totals()
    assert totals.calls == 90 and totals.prompt_tokens == 900 and totals.cost_usd == pytest.approx(0.09)


def test_concurrent_records_from_processes_are_all_counted(ledger):
    code = ("import sys; from org.llm import UsageLedger\n"
            "for _ in range(20): UsageLedger(sys.argv[1]).record(supervisor='p', prompt_tokens=1, completion_tokens=0, cost_usd=0.0)")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(ledger.path)], cwd=ROOT) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    assert ledger.totals().calls == 60


def test_a_damaged_ledger_stops_spending_with_a_reason(llm_server, llm_key, ledger):
    ledger.path.parent.mkdir(parents=True)
    ledger.path.write_text('{"totals": {"calls": -1}}')
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server), ledger))
    assert raised.value.kind == "ledger"
    assert raised.value.reason.startswith(f"{ledger.path}: the usage ledger is damaged (totals.calls:")
    assert llm_server.requests == []


def test_without_a_budget_the_ledger_still_records(llm_server, llm_key, ledger):
    llm_server.script(Reply.valid(Findings, GOOD, cost=9.0), Reply.valid(Findings, GOOD, cost=9.0))
    client = ChatClient(model_config_for(llm_server, daily_budget_usd=None), ledger)
    ask(client)
    ask(client)
    assert ledger.spent_today() == 18.0 and client.run_cost_usd == 18.0


# =========================================================================== config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "supervisors.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_example_config_loads(tmp_path):
    config = load_config(EXAMPLE)
    assert config is not None and config.enabled
    assert config.enabled_supervisors() == ["code_style", "design", "internaliser"]
    assert config.model_for("code_style").model == "anthropic/claude-sonnet-4"
    internaliser = config.model_for("internaliser")
    assert (internaliser.model, internaliser.price_per_million_input, internaliser.timeout_seconds) == ("anthropic/claude-3.5-haiku", 0.8, 60)
    assert config.knowledge_root(tmp_path) == tmp_path / "knowledge"


def test_defaults_follow_the_design():
    config = SupervisorsConfig.model_validate({"model": {"model": "m"}})
    assert config.model.base_url == "https://openrouter.ai/api/v1" and config.model.api_key_env == "OPENROUTER_API_KEY"
    assert [config.settings_for(n).every_tasks for n in ("code_style", "design", "internaliser")] == [5, None, 3]
    assert [config.settings_for(n).on_abort for n in ("code_style", "design", "internaliser")] == [False, True, False]
    assert config.urgency.threshold == 1.0 and config.urgency.weights.task_abort == 1.0
    assert (config.knowledge.injection_token_budget, config.directives.cleanup_max_age_tasks, config.directives.cleanup_cap) == (2000, 15, 10)
    assert SupervisorsConfig.model_validate({"enabled": False}).enabled_supervisors() == []


def test_an_override_can_switch_the_key_off_for_a_local_endpoint():
    config = SupervisorsConfig.model_validate({"model": {"model": "m"}, "supervisors": {"design": {"model": {
        "base_url": "http://localhost:11434/v1", "api_key_env": None, "daily_budget_usd": None}}}})
    design = config.model_for("design")
    assert (design.base_url, design.api_key_env, design.daily_budget_usd, design.model) == ("http://localhost:11434/v1", None, None, "m")
    assert config.model_for("code_style").api_key_env == "OPENROUTER_API_KEY"


@pytest.mark.parametrize("text, line, field, reason", [
    ("model:\n  model: m\n  timeout_seconds: fast\n", 3, "model.timeout_seconds", "Input should be a valid number"),
    ("model:\n  model: m\n  api_key: sk-or-v1-abc\n", 3, "model.api_key", "unknown field"),
    ("enabled: true\nsupervisors: {}\n", 1, "model", "required while enabled is true"),
    ("model:\n  model: m\nsupervisors:\n  design:\n    every_tasks: 0\n", 5, "supervisors.design.every_tasks", "greater than or equal to 1"),
    ("model:\n  model: m\n  base_url: openrouter.ai/api/v1\n", 3, "model.base_url", "should match pattern"),
    ("model:\n  model: m\n  max_retries: '3'\n", 3, "model.max_retries", "valid integer"),
    ("model:\n  model: m\n  api_key_env: gsk_live_9f8a7b6c5d4e3f2a1b0c\n", 3, "model.api_key_env", "should match pattern"),
])
def test_config_problems_are_logged_once_with_file_line_and_field(tmp_path, caplog, text, line, field, reason):
    path = write(tmp_path, text)
    assert load_config(tmp_path) is None
    assert load_config(path) is None  # the same problem again: not logged again
    lines = [r.getMessage() for r in caplog.records if r.name == "a0org"]
    assert len(lines) == 1, lines
    assert "gsk_live" not in lines[0]  # a key pasted as the variable's name is not echoed
    assert lines[0].startswith(f"{path}:{line}: {field}: ") and reason in lines[0]
    assert lines[0].endswith("the LLM-backed supervisors stay off until it is fixed")


def test_a_fixed_config_loads_and_a_new_break_is_logged_again(tmp_path, caplog):
    path = write(tmp_path, "model:\n  model: m\n  max_retries: -1\n")
    assert load_config(path) is None
    write(tmp_path, "model:\n  model: m\n")
    assert load_config(path).model.model == "m"
    write(tmp_path, "model:\n  model: m\n  max_retries: -1\n")
    assert load_config(path) is None
    assert len([r for r in caplog.records if r.name == "a0org"]) == 2


def test_several_problems_make_one_line_pointing_at_validate(tmp_path, caplog):
    path = write(tmp_path, "model:\n  model: ''\n  max_retries: 99\n")
    assert load_config(path) is None
    [message] = [r.getMessage() for r in caplog.records if r.name == "a0org"]
    assert message.startswith(f"{path}:2: model.model: ") and f"(and 1 more: a0org validate {path})" in message


def test_no_config_file_is_silence(tmp_path, caplog, org_home):
    assert load_config(tmp_path) is None and load_config(OrganizationLayout(tmp_path)) is None
    assert config_path() == org_home / "supervisors.yaml" and load_config() is None
    assert caplog.records == []


def test_a0org_validate_recognises_a_config_without_modeline(tmp_path):
    path = write(tmp_path, "model:\n  model: m\n  daily_budget_usd: -1\n")
    done = subprocess.run([sys.executable, "-m", "org", "validate", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == f"{path}:3: model.daily_budget_usd: Input should be greater than or equal to 0"
    good = write(tmp_path, yaml.safe_dump({"supervisors": {"design": {"enabled": False}}, "model": {"model": "m"}}))
    done = subprocess.run([sys.executable, "-m", "org", "validate", str(good), str(EXAMPLE)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "2 file(s) checked: valid"


def test_a0org_validate_skips_the_supervisors_state_folder(tmp_path, ledger):
    ledger.record(supervisor="design", prompt_tokens=1, completion_tokens=1, cost_usd=0.0)
    write(ledger.path.parent.parent, "model:\n  model: m\n")
    done = subprocess.run([sys.executable, "-m", "org", "validate", str(ledger.path.parent.parent)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "1 file(s) checked: valid", done.stderr


def test_an_http_1_0_endpoint_that_closes_after_its_answer_is_read_whole(llm_key):
    """HTTP/1.0 answers close the connection: http.client closes the socket once the body is read."""
    with ScriptedServer(Reply.valid(Findings, GOOD), Reply.valid(Findings, GOOD), connection="http/1.0") as server:
        client = ChatClient(model_config_for(server, max_retries=0))
        assert ask(client).attempts == 1 and ask(client).parsed == Findings.model_validate(GOOD)
        assert len(server.requests) == 2


def test_no_pause_is_taken_that_leaves_too_little_time_for_the_try(llm_server, llm_key):
    """A pause that would end a moment before the deadline leaves the next try no time to be
    answered (a real socket timeout of a millisecond): the pause is not taken."""
    from org.llm.transport import MIN_ATTEMPT_SECONDS

    class FixedRandom(random.Random):
        def uniform(self, a: float, b: float) -> float:
            return b  # the longest jittered pause: 0.3 s for the first

    llm_server.script(*[Status(503)] * 10)
    clock = VirtualClock()
    with pytest.raises(ModelUnavailable) as raised:
        ask(ChatClient(model_config_for(llm_server, max_retries=10, backoff_seconds=0.2), clock=clock, rng=FixedRandom()),
            seconds=0.3 + MIN_ATTEMPT_SECONDS - 0.001)
    assert "no time left for another attempt" in raised.value.reason
    assert clock.waits == [] and len(llm_server.requests) == 1
