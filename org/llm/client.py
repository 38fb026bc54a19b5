"""A small OpenAI-compatible chat-completions client for the supervisors (stdlib HTTP only).

One :class:`ChatClient` serves one supervisor run. Each :meth:`ChatClient.complete` call

* reads the API key from the environment variable the config names, at call time; the key
  goes into the ``Authorization`` header and nowhere else (no log, exception or file);
* refuses before sending when the run's token cap or the day's cost budget would be passed;
* asks for one JSON object: ``response_format`` ``json_schema``, falling back by itself to
  ``json_object`` or none where the endpoint refuses it (:mod:`org.llm.structured`), and
  always in the prompt; then finds, tolerates and validates it against the caller's
  pydantic schema (:mod:`org.llm.answer`), with one repair round that sends the problems
  back when the answer cannot be used;
* sends through :class:`~org.llm.transport.Transport`, which retries with backoff and never
  passes the run's deadline;
* records tokens and cost in the :class:`~org.llm.budget.UsageLedger`, also when the
  answer turns out to be unusable (the tokens were paid for).

Failures are two exceptions: :class:`~org.llm.transport.ModelUnavailable` (skip the run)
and :class:`~org.llm.answer.ModelOutputInvalid` (discard the answer).
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from org import __version__
from org.contracts.supervisors import ModelConfig
from org.kernel.log import warn_once
from org.kernel.redact import remember_secret
from org.kernel.values import plain_number

from . import structured
from .answer import ModelOutputInvalid, ParsedAnswer, content_text, json_instruction, parse_answer, with_instruction
from .budget import LedgerError, UsageLedger
from .structured import ResponseFormat
from .transport import MAX_RESPONSE_BYTES, Answer, Clock, ModelUnavailable, Transport, error_message


@dataclass(frozen=True)
class ChatResult:
    """A validated answer, what it cost, and what it took to get it.

    ``answers`` are the raw answers as received (the first, and the repaired one when
    there was a repair round); ``notes`` say what was done (structured-output fallback,
    JSON found in prose, fields cut, the repair); ``response_format`` is the level used.
    """

    parsed: BaseModel
    raw_text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    attempts: int
    seconds: float
    model: str = ""
    answers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    repairs: int = 0
    response_format: str = "none"

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass
class _Call:
    """One answered call."""

    text: str
    finish_reason: str | None
    model: str
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    refusal: str = ""


#: Bytes of an over-large answer kept as its raw answer.
ANSWER_START_BYTES = 200_000


def deadline_after(seconds: float) -> float:
    """The deadline ``seconds`` from now, as :meth:`ChatClient.complete` takes it (``time.monotonic``)."""
    return time.monotonic() + seconds


def approx_tokens(text: str) -> int:
    """A rough token count (4 characters a token), for checks made before the endpoint counts."""
    return math.ceil(len(text) / 4)


def estimate_prompt(messages: list[dict[str, Any]], response_format: dict[str, Any] | None) -> int:
    """The prompt tokens of a request, as the endpoint will count them: the messages (4 tokens of
    framing each) and the schema of a ``json_schema`` response format."""
    schema = json.dumps(response_format, separators=(",", ":")) if response_format and response_format.get("type") == "json_schema" else ""
    return sum(approx_tokens(_text_of(m)) + 4 for m in messages) + approx_tokens(schema)


class ChatClient:
    """Chat completions for one supervisor run: token cap, budget, retries and deadline.

    ``usage_ledger`` may be None (nothing is recorded and the daily budget is not checked).
    ``supervisor`` names the caller in the ledger's breakdown. The run's running totals are
    :attr:`run_prompt_tokens`, :attr:`run_completion_tokens`, :attr:`run_cost_usd` and
    :attr:`run_calls`, counting every answered call, usable or not.
    """

    def __init__(self, model_config: ModelConfig, usage_ledger: UsageLedger | None = None, *,
                 supervisor: str = "supervisor", rng: random.Random | None = None, clock: Clock | None = None):
        self.config = model_config
        self.ledger = usage_ledger
        self.supervisor = supervisor
        self.transport = Transport(model_config, rng, clock)
        self.clock = self.transport.clock
        self.endpoint = self.transport.endpoint
        self.run_prompt_tokens = 0
        self.run_completion_tokens = 0
        self.run_cost_usd = 0.0
        self.run_calls = 0
        #: Every answer received in this run, as text, usable or not (kept whatever the failure).
        self.raw_answers: list[str] = []

    @property
    def run_tokens(self) -> int:
        """Tokens used so far in this run (prompt plus completion)."""
        return self.run_prompt_tokens + self.run_completion_tokens

    # ------------------------------------------------------------------ the call

    def complete(self, messages: list[dict[str, Any]], *, schema: type[BaseModel], max_tokens: int | None = None,
                 deadline: float) -> ChatResult:
        """Ask the model and return its answer validated against ``schema``.

        ``messages`` are OpenAI chat messages (``{"role", "content"}``); a JSON instruction
        is added to the system message. ``max_tokens`` caps the answer (at most the config's
        ``max_tokens_per_request``, which is also the default). ``deadline`` is a
        ``time.monotonic()`` instant (see :func:`deadline_after`; the ``clock``'s when one is given): no attempt or pause
        passes it. An answer that cannot be used gets one repair round (its errors sent
        back) when the run's token cap, the budget and the deadline allow.
        Raises :class:`ModelUnavailable` or :class:`ModelOutputInvalid`.
        """
        started = self.clock.monotonic()
        if started >= deadline:
            raise ModelUnavailable("the run's time budget was spent before the model was asked", "deadline")
        key = self._key()
        limit = min(max_tokens or self.config.max_tokens_per_request, self.config.max_tokens_per_request)
        notes: list[str] = []
        level = structured.first_level(self.config)
        call, level = self._call(messages, limit, schema, level, deadline, key, notes)
        calls = [call]
        try:
            parsed = self._parse(call, limit, schema)
        except ModelOutputInvalid as invalid:
            repair = repair_messages(messages, call, invalid, limit)  # the instruction is added per call
            why_not = self._why_no_repair(repair, limit, deadline, schema, level)
            if why_not:
                raise self._given_up(invalid, calls, notes + [f"no repair round: {why_not}"]) from None
            notes.append(f"repair round: {len(invalid.errors)} problem(s) sent back ({invalid.reason})")
            try:
                call, level = self._call(repair, limit, schema, level, deadline, key, notes)
            except ModelUnavailable as exc:
                raise self._given_up(invalid, calls, notes + [f"the repair round failed: {exc.reason}"]) from None
            calls.append(call)
            try:
                parsed = self._parse(call, limit, schema)
            except ModelOutputInvalid as again:
                raise self._given_up(again, calls, notes + ["the repaired answer could not be used either"]) from None
            notes.append("repaired answer accepted")
        notes += parsed.notes
        return ChatResult(parsed=parsed.value, raw_text=call.text, prompt_tokens=sum(c.prompt_tokens for c in calls),
                          completion_tokens=sum(c.completion_tokens for c in calls), cost_usd=sum(c.cost for c in calls),
                          attempts=sum(c.attempts for c in calls), seconds=self.clock.monotonic() - started, model=call.model,
                          answers=tuple(c.text for c in calls), notes=tuple(notes), repairs=len(calls) - 1,
                          response_format=level)

    def _call(self, messages: list[dict[str, Any]], limit: int, schema: type[BaseModel], level: ResponseFormat,
              deadline: float, key: str | None, notes: list[str]) -> tuple[_Call, ResponseFormat]:
        """One answered call; an endpoint that refuses the response format is asked again with a weaker one.
        The JSON instruction goes into the system message, with the schema unless the request carries it."""
        first = level
        while True:
            sent = with_instruction(messages, json_instruction(schema, schema_in_request=level == "json_schema"))
            prompt_estimate = estimate_prompt(sent, structured.response_format(level, schema))
            if level == first:
                self._check_token_cap(prompt_estimate + limit)
                self._check_budget(prompt_estimate, limit)
            body = json.dumps(self._request_body(sent, limit, structured.response_format(level, schema))).encode("utf-8")
            try:
                answer, attempts = self.transport.send(body, self._headers(key), deadline, key)
                break
            except ModelUnavailable as exc:
                lower = structured.lower_level(level)
                if exc.kind != "rejected" or exc.status not in structured.REFUSED_STATUSES or lower is None:
                    raise
                notes.append(f"the endpoint refused response_format {level} ({exc.reason}); asked again with {lower}")
                level = lower
        if level != first:
            structured.remember(self.config, level)
        if not answer.complete:  # paid for: counted as an answer of max_tokens, kept, never asked again
            start = answer.body[:ANSWER_START_BYTES].decode("utf-8", "replace")
            self.raw_answers.append(start)
            self._account(None, prompt_estimate, "", completion_estimate=limit)
            raise ModelOutputInvalid(f"the answer was larger than {MAX_RESPONSE_BYTES:,} bytes; only its start was read", start,
                                     [f"your answer was larger than {MAX_RESPONSE_BYTES:,} bytes"])
        envelope = self._envelope(answer, key)
        text, finish_reason, model, refusal = _message(envelope)
        self.raw_answers.append(text)
        prompt_tokens, completion_tokens, cost = self._account(envelope.get("usage"), prompt_estimate, text)
        return _Call(text, finish_reason, model, attempts, prompt_tokens, completion_tokens, cost, refusal), level

    def _parse(self, call: _Call, limit: int, schema: type[BaseModel]) -> ParsedAnswer:
        if call.refusal and not call.text.strip():
            raise ModelOutputInvalid(f"the model refused: {call.refusal[:200]}", call.text, [f"you refused: {call.refusal[:200]}"])
        try:
            parsed = parse_answer(call.text, schema)
        except ModelOutputInvalid as exc:
            if call.finish_reason == "length":
                raise ModelOutputInvalid(f"the answer was cut off at max_tokens ({limit})", call.text,
                                         [f"your answer was cut off at {limit} tokens, before the JSON object was complete"],
                                         exc.notes) from None
            raise
        if call.finish_reason == "length":
            parsed.notes.append(f"cut off at max_tokens ({limit}), but the JSON object was complete")
        return parsed

    def _why_no_repair(self, repair: list[dict[str, Any]], limit: int, deadline: float, schema: type[BaseModel],
                       level: ResponseFormat) -> str:
        """Why a repair round cannot be made ("" when it can)."""
        if self.clock.monotonic() >= deadline:
            return "the run's time budget is spent"
        sent = with_instruction(repair, json_instruction(schema, schema_in_request=level == "json_schema"))
        needed = estimate_prompt(sent, structured.response_format(level, schema)) + limit
        if self.run_tokens + needed > self.config.max_tokens_per_run:
            return f"the run's token cap ({self.run_tokens} of {self.config.max_tokens_per_run} used, the repair may need {needed})"
        try:
            self._check_budget(needed - limit, limit)
        except ModelUnavailable as exc:
            return exc.reason
        return ""

    @staticmethod
    def _given_up(invalid: ModelOutputInvalid, calls: list[_Call], notes: list[str]) -> ModelOutputInvalid:
        invalid.answers = [c.text for c in calls]
        invalid.repairs = len(calls) - 1
        invalid.notes = notes + [n for n in invalid.notes if n not in notes]
        return invalid

    # ------------------------------------------------------------------ checks before sending

    def _key(self) -> str | None:
        name = self.config.api_key_env
        if name is None:
            return None
        key = os.environ.get(name, "").strip()
        if not key:
            raise ModelUnavailable(f"no API key: the environment variable {name} is not set", "no_key")
        if not key.isascii() or not key.isprintable() or any(ch.isspace() for ch in key):
            raise ModelUnavailable(f"the API key in {name} has characters a header cannot carry", "no_key")
        remember_secret(key)  # whatever its shape, redacted from everything the pack writes
        return key

    def _check_token_cap(self, needed: int) -> None:
        cap = self.config.max_tokens_per_run
        if self.run_tokens + needed > cap:
            raise ModelUnavailable(f"the run's token cap: {self.run_tokens} of {cap} tokens used, "
                                   f"and this call may need {needed}", "token_cap")

    def _check_budget(self, prompt_estimate: int, limit: int) -> None:
        budget = self.config.daily_budget_usd
        if self.ledger is None or budget is None:
            return
        try:
            spent = self.ledger.spent_today()
        except LedgerError as exc:
            raise ModelUnavailable(str(exc), "ledger") from None
        worst_case = self._price(prompt_estimate, limit)
        if spent >= budget or spent + worst_case > budget:
            raise ModelUnavailable(f"daily budget spent: ${spent:.4f} of ${budget:.2f} used today (UTC)", "budget")

    def _price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.config.price_per_million_input
                + completion_tokens * self.config.price_per_million_output) / 1_000_000

    # ------------------------------------------------------------------ the request

    def _request_body(self, messages: list[dict[str, Any]], limit: int, response_format: dict[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages, "max_tokens": limit,
                                "temperature": self.config.temperature, "stream": False}
        if response_format is not None:
            body["response_format"] = response_format
        return body

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"a0-org-kernel/{__version__}"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        host = self.transport.host
        if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
            headers["X-Title"] = "a0-org-kernel"  # OpenRouter's app attribution
        return headers

    # ------------------------------------------------------------------ the answer

    def _envelope(self, answer: Answer, key: str | None) -> dict[str, Any]:
        try:
            envelope = json.loads(answer.body)
        except (ValueError, RecursionError):
            raise ModelUnavailable(f"{self.endpoint} answered with something that is not a chat completion "
                                   "(check base_url)", "rejected") from None
        if not isinstance(envelope, dict) or not isinstance(envelope.get("choices"), list) or not envelope["choices"]:
            message = error_message(answer.body, key)
            raise ModelUnavailable(f"{self.endpoint} answered without a choice" + (f": {message}" if message else ""),
                                   "rejected")
        return envelope

    def _account(self, usage: Any, prompt_estimate: int, text: str, completion_estimate: int | None = None) -> tuple[int, int, float]:
        """Tokens and cost of an answered call, added to the run's totals and the ledger."""
        usage = usage if isinstance(usage, dict) else {}
        prompt_tokens = _count(usage.get("prompt_tokens"), prompt_estimate)
        completion_tokens = _count(usage.get("completion_tokens"), approx_tokens(text) if completion_estimate is None else completion_estimate)
        reported = usage.get("cost")
        cost = float(reported) if plain_number(reported, 0, math.inf) else self._price(prompt_tokens, completion_tokens)
        self.run_calls += 1
        self.run_prompt_tokens += prompt_tokens
        self.run_completion_tokens += completion_tokens
        self.run_cost_usd += cost
        if self.ledger is not None:
            try:
                self.ledger.record(supervisor=self.supervisor, prompt_tokens=prompt_tokens,
                                   completion_tokens=completion_tokens, cost_usd=cost)
            except LedgerError as exc:
                warn_once(f"{exc}; this call's usage was not recorded", key=f"{self.ledger.path}:record")
        return prompt_tokens, completion_tokens, cost


def _message(envelope: dict[str, Any]) -> tuple[str, str | None, str, str]:
    """The answer's text (content as a string or as a list of parts), finish reason, model and refusal."""
    choice = envelope["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    text = content_text(message.get("content")) if isinstance(message, dict) else ""
    refusal = message.get("refusal") if isinstance(message, dict) else None
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    model = envelope.get("model")
    return (text, finish if isinstance(finish, str) else None, model if isinstance(model, str) else "",
            refusal if isinstance(refusal, str) else "")


def _text_of(message: dict[str, Any]) -> str:
    return content_text(message.get("content"))


#: Characters of a broken answer sent back in the repair round.
REPAIR_ANSWER_CHARS = 24_000


def repair_messages(messages: list[dict[str, Any]], call: _Call, invalid: ModelOutputInvalid, limit: int) -> list[dict[str, Any]]:
    """The conversation for the repair round: the broken answer and its problems (a cut-off answer is not sent back)."""
    problems = "\n".join(f"- {error}" for error in invalid.errors)
    if call.finish_reason == "length":
        return messages + [{"role": "user", "content": (
            f"Your previous answer was cut off at the {limit}-token limit, so it could not be used. Answer again with one "
            "complete JSON object that fits well within that limit: fewer documents, shorter rules and examples.")}]
    broken = [{"role": "assistant", "content": call.text[:REPAIR_ANSWER_CHARS]}] if call.text.strip() else []
    return messages + broken + [
        {"role": "user", "content": ("Your answer could not be used:\n" + problems + "\nAnswer again with the complete, corrected "
                                     "JSON object only, valid against the schema in the instructions.")},
    ]


def _count(value: Any, fallback: int) -> int:
    """A token count the endpoint reported, or ``fallback`` when it reported none that makes sense."""
    return int(value) if plain_number(value, 0, math.inf) else fallback


__all__ = ["ChatClient", "ChatResult", "approx_tokens", "deadline_after"]
