"""A small OpenAI-compatible chat-completions client for the supervisors (stdlib HTTP only).

One :class:`ChatClient` serves one supervisor run. Each :meth:`ChatClient.complete` call

* reads the API key from the environment variable the config names, at call time; the key
  goes into the ``Authorization`` header and nowhere else (no log, exception or file);
* refuses before sending when the run's token cap or the day's cost budget would be passed;
* asks for one JSON object (``response_format`` when the endpoint supports it, and always in
  the prompt), then parses and validates it against the caller's pydantic schema
  (:mod:`org.llm.answer`);
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

from .answer import ModelOutputInvalid, json_instruction, parse_output, with_instruction
from .budget import LedgerError, UsageLedger
from .transport import Answer, ModelUnavailable, Transport, error_message


@dataclass(frozen=True)
class ChatResult:
    """A validated answer and what it cost."""

    parsed: BaseModel
    raw_text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    attempts: int
    seconds: float
    model: str = ""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


def deadline_after(seconds: float) -> float:
    """The deadline ``seconds`` from now, as :meth:`ChatClient.complete` takes it (``time.monotonic``)."""
    return time.monotonic() + seconds


def approx_tokens(text: str) -> int:
    """A rough token count (4 characters a token), for checks made before the endpoint counts."""
    return math.ceil(len(text) / 4)


class ChatClient:
    """Chat completions for one supervisor run: token cap, budget, retries and deadline.

    ``usage_ledger`` may be None (nothing is recorded and the daily budget is not checked).
    ``supervisor`` names the caller in the ledger's breakdown. The run's running totals are
    :attr:`run_prompt_tokens`, :attr:`run_completion_tokens`, :attr:`run_cost_usd` and
    :attr:`run_calls`, counting every answered call, usable or not.
    """

    def __init__(self, model_config: ModelConfig, usage_ledger: UsageLedger | None = None, *,
                 supervisor: str = "supervisor", rng: random.Random | None = None):
        self.config = model_config
        self.ledger = usage_ledger
        self.supervisor = supervisor
        self.transport = Transport(model_config, rng)
        self.endpoint = self.transport.endpoint
        self.run_prompt_tokens = 0
        self.run_completion_tokens = 0
        self.run_cost_usd = 0.0
        self.run_calls = 0

    @property
    def run_tokens(self) -> int:
        """Tokens used so far in this run (prompt plus completion)."""
        return self.run_prompt_tokens + self.run_completion_tokens

    # ------------------------------------------------------------------ the call

    def complete(self, messages: list[dict[str, str]], *, schema: type[BaseModel], max_tokens: int | None = None,
                 deadline: float) -> ChatResult:
        """Ask the model and return its answer validated against ``schema``.

        ``messages`` are OpenAI chat messages (``{"role", "content"}``); a JSON instruction
        is added to the system message. ``max_tokens`` caps the answer (at most the config's
        ``max_tokens_per_request``, which is also the default). ``deadline`` is a
        ``time.monotonic()`` instant (see :func:`deadline_after`): no attempt or pause
        passes it. Raises :class:`ModelUnavailable` or :class:`ModelOutputInvalid`.
        """
        started = time.monotonic()
        if started >= deadline:
            raise ModelUnavailable("the run's time budget was spent before the model was asked", "deadline")
        key = self._key()
        messages = with_instruction(messages, json_instruction(schema))
        limit = min(max_tokens or self.config.max_tokens_per_request, self.config.max_tokens_per_request)
        prompt_estimate = sum(approx_tokens(m.get("content") or "") + 4 for m in messages)
        self._check_token_cap(prompt_estimate + limit)
        self._check_budget(prompt_estimate, limit)
        body = json.dumps(self._request_body(messages, limit)).encode("utf-8")
        answer, attempts = self.transport.send(body, self._headers(key), deadline, key)
        envelope = self._envelope(answer, key)
        text, finish_reason, model = _message(envelope)
        prompt_tokens, completion_tokens, cost = self._account(envelope.get("usage"), prompt_estimate, text)
        if finish_reason == "length":
            raise ModelOutputInvalid(f"the answer was cut off at max_tokens ({limit})", text)
        parsed = parse_output(text, schema)
        return ChatResult(parsed=parsed, raw_text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                          cost_usd=cost, attempts=attempts, seconds=time.monotonic() - started, model=model)

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

    def _request_body(self, messages: list[dict[str, str]], limit: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages, "max_tokens": limit,
                                "temperature": self.config.temperature, "stream": False}
        if self.config.json_mode:
            body["response_format"] = {"type": "json_object"}
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
        except ValueError:
            raise ModelUnavailable(f"{self.endpoint} answered with something that is not a chat completion "
                                   "(check base_url)", "rejected") from None
        if not isinstance(envelope, dict) or not isinstance(envelope.get("choices"), list) or not envelope["choices"]:
            message = error_message(answer.body, key)
            raise ModelUnavailable(f"{self.endpoint} answered without a choice" + (f": {message}" if message else ""),
                                   "rejected")
        return envelope

    def _account(self, usage: Any, prompt_estimate: int, text: str) -> tuple[int, int, float]:
        """Tokens and cost of an answered call, added to the run's totals and the ledger."""
        usage = usage if isinstance(usage, dict) else {}
        prompt_tokens = _count(usage.get("prompt_tokens"), prompt_estimate)
        completion_tokens = _count(usage.get("completion_tokens"), approx_tokens(text))
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


def _message(envelope: dict[str, Any]) -> tuple[str, str | None, str]:
    choice = envelope["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    text = content if isinstance(content, str) else ""
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    model = envelope.get("model")
    return text, finish if isinstance(finish, str) else None, model if isinstance(model, str) else ""


def _count(value: Any, fallback: int) -> int:
    """A token count the endpoint reported, or ``fallback`` when it reported none that makes sense."""
    return int(value) if plain_number(value, 0, math.inf) else fallback


__all__ = ["ChatClient", "ChatResult", "approx_tokens", "deadline_after"]
