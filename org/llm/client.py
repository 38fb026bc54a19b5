"""A small OpenAI-compatible chat-completions client for the supervisors (stdlib HTTP only).

One :class:`ChatClient` serves one supervisor run. Each :meth:`ChatClient.complete` call

* reads the API key from the environment variable the config names, at call time; the key
  goes into the ``Authorization`` header and nowhere else (no log, exception or file);
* refuses before sending when the run's token cap or the day's cost budget would be passed;
* asks for one JSON object (``response_format`` when the endpoint supports it, and always in
  the prompt), then parses and validates it against the caller's pydantic schema;
* retries 429 (honouring ``Retry-After``), 5xx, timeouts and connection errors with
  exponential backoff and jitter, never past the run's deadline; other errors are final;
* records tokens and cost in the :class:`~org.llm.budget.UsageLedger`, also when the
  answer turns out to be unusable (the tokens were paid for).

Failures are two exceptions: :class:`ModelUnavailable` (skip the run) and
:class:`ModelOutputInvalid` (discard the answer).
"""

from __future__ import annotations

import http.client
import json
import math
import os
import random
import re
import ssl
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from org import __version__
from org.contracts.supervisors import ModelConfig
from org.kernel.log import logger, warn_once
from org.kernel.redact import remember_secret

from .budget import LedgerError, UsageLedger

#: Why a model could not be used, for run records and statistics.
UnavailableKind = Literal["no_key", "unreachable", "rejected", "budget", "token_cap", "deadline", "ledger"]

#: Statuses worth another attempt: rate limits, timeouts and server trouble.
RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
#: The longest single pause between attempts, whatever the backoff or Retry-After says.
MAX_DELAY_SECONDS = 120.0
#: An answer larger than this is refused unread.
MAX_RESPONSE_BYTES = 4_000_000
#: Characters of an endpoint's error message kept in a reason.
REASON_CHARS = 200

_FENCED = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)```", re.DOTALL)


class ModelUnavailable(Exception):
    """The model cannot be used now (no key, unreachable, refused, budget or deadline).

    Callers skip the run with one log line naming :attr:`reason`; :attr:`kind` sorts the
    cause. The message never contains the key.
    """

    def __init__(self, reason: str, kind: UnavailableKind = "unreachable"):
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


class ModelOutputInvalid(Exception):
    """The model answered, but not with JSON that matches the schema; nothing of it is used.

    :attr:`reason` is short and fit for a log line; :attr:`raw_text` is the answer as received.
    """

    def __init__(self, reason: str, raw_text: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.raw_text = raw_text


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


def json_instruction(schema: type[BaseModel]) -> str:
    """The prompt text that asks for one JSON object matching ``schema``."""
    schema_text = json.dumps(schema.model_json_schema(), separators=(",", ":"), sort_keys=True)
    return ("Answer with exactly one JSON object and nothing else: no prose before or after it, no code fence. "
            f"It must validate against this JSON Schema:\n{schema_text}")


def extract_json_text(text: str) -> str:
    """The JSON in an answer: the whole text, or the content of a ```json fenced block."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return stripped
    fenced = _FENCED.search(text)
    return fenced.group(1).strip() if fenced else stripped


def parse_output(text: str, schema: type[BaseModel]) -> BaseModel:
    """Parse and validate an answer; :class:`ModelOutputInvalid` with a short reason otherwise."""
    json_text = extract_json_text(text)
    if not json_text:
        raise ModelOutputInvalid("the answer is empty", text)
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as exc:
        raise ModelOutputInvalid(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", text) from None
    if not isinstance(data, dict):
        raise ModelOutputInvalid(f"expected a JSON object, found {type(data).__name__}", text)
    try:
        return schema.model_validate_json(json_text)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"]) or "(object)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ModelOutputInvalid(f"does not match {schema.__name__}: {where}: {first['msg']}{more}", text) from None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class _Failure:
    reason: str
    retryable: bool
    kind: UnavailableKind = "unreachable"
    retry_after: float | None = None


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


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
        self._rng = rng or random.Random()
        parts = urlsplit(model_config.base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._path = parts.path.rstrip("/") + "/chat/completions"
        self.endpoint = self._host + (f":{parts.port}" if parts.port else "")
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
        answer, attempts = self._send_with_retries(body, self._headers(key), deadline, key)
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
        if self._host == "openrouter.ai" or self._host.endswith(".openrouter.ai"):
            headers["X-Title"] = "a0-org-kernel"  # OpenRouter's app attribution
        return headers

    def _send_with_retries(self, body: bytes, headers: dict[str, str], deadline: float,
                           key: str | None) -> tuple[_Answer, int]:
        attempt = 0
        while True:
            attempt += 1
            now = time.monotonic()
            if now >= deadline:
                raise ModelUnavailable(f"no usable answer from {self.endpoint} within the run's time budget", "deadline")
            outcome = self._attempt(body, headers, min(deadline, now + self.config.timeout_seconds), key)
            if isinstance(outcome, _Answer):
                return outcome, attempt
            if not outcome.retryable:
                raise ModelUnavailable(outcome.reason, outcome.kind)
            if attempt > self.config.max_retries:
                raise ModelUnavailable(f"{outcome.reason} (gave up after {attempt} attempts)", outcome.kind)
            delay = self._delay(attempt, outcome.retry_after)
            if time.monotonic() + delay >= deadline:
                raise ModelUnavailable(f"{outcome.reason}; no time left for another attempt within the run's time budget",
                                       "deadline")
            logger.debug("model call to %s: %s; retry %d of %d in %.1f s", self.endpoint, outcome.reason,
                         attempt, self.config.max_retries, delay)
            time.sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = self.config.backoff_seconds * 2 ** (attempt - 1) * self._rng.uniform(0.5, 1.5)
        return min(MAX_DELAY_SECONDS, max(backoff, retry_after or 0.0))

    def _attempt(self, body: bytes, headers: dict[str, str], until: float, key: str | None) -> _Answer | _Failure:
        try:
            answer = self._post(body, headers, until)
        except ssl.SSLCertVerificationError as exc:
            return _Failure(f"TLS certificate of {self.endpoint} not trusted: {_scrub(exc.verify_message or str(exc), key)}",
                            retryable=False, kind="rejected")
        except TimeoutError:
            return _Failure(f"no answer from {self.endpoint} in time", retryable=True)
        except (OSError, http.client.HTTPException) as exc:
            detail = _scrub(str(exc) or type(exc).__name__, key)
            return _Failure(f"cannot reach {self.endpoint}: {type(exc).__name__}: {detail}"[:REASON_CHARS * 2], retryable=True)
        if 200 <= answer.status < 300:
            return answer
        message = _error_message(answer.body, key)
        reason = f"HTTP {answer.status} from {self.endpoint}" + (f": {message}" if message else "")
        if answer.status in RETRY_STATUSES:
            return _Failure(reason, retryable=True, retry_after=parse_retry_after(answer.headers.get("Retry-After")))
        return _Failure(reason + _hint(answer.status, self.config.api_key_env), retryable=False,
                        kind="budget" if answer.status == 402 else "rejected")

    def _post(self, body: bytes, headers: dict[str, str], until: float) -> _Answer:
        """One POST, every socket wait bounded by ``until``, however the server trickles."""
        def remaining() -> float:
            left = until - time.monotonic()
            if left <= 0:
                raise TimeoutError("deadline")
            return left

        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        connection = cls(self._host, self._port, timeout=remaining())
        try:
            connection.connect()
            sock = connection.sock
            sock.settimeout(remaining())
            connection.request("POST", self._path, body=body, headers=headers)
            sock.settimeout(remaining())
            response = connection.getresponse()
            chunks, size = [], 0
            while True:
                sock.settimeout(remaining())
                chunk = response.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise http.client.HTTPException(f"answer larger than {MAX_RESPONSE_BYTES} bytes")
                chunks.append(chunk)
            return _Answer(response.status, response.headers, b"".join(chunks))
        finally:
            connection.close()

    # ------------------------------------------------------------------ the answer

    def _envelope(self, answer: _Answer, key: str | None) -> dict[str, Any]:
        try:
            envelope = json.loads(answer.body)
        except ValueError:
            raise ModelUnavailable(f"{self.endpoint} answered with something that is not a chat completion "
                                   "(check base_url)", "rejected") from None
        if not isinstance(envelope, dict) or not isinstance(envelope.get("choices"), list) or not envelope["choices"]:
            message = _error_message(answer.body, key)
            raise ModelUnavailable(f"{self.endpoint} answered without a choice" + (f": {message}" if message else ""),
                                   "rejected")
        return envelope

    def _account(self, usage: Any, prompt_estimate: int, text: str) -> tuple[int, int, float]:
        """Tokens and cost of an answered call, added to the run's totals and the ledger."""
        usage = usage if isinstance(usage, dict) else {}
        prompt_tokens = _count(usage.get("prompt_tokens"), prompt_estimate)
        completion_tokens = _count(usage.get("completion_tokens"), approx_tokens(text))
        reported = usage.get("cost")
        cost = float(reported) if _is_number(reported) and reported >= 0 else self._price(prompt_tokens, completion_tokens)
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


def with_instruction(messages: list[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    """``messages`` with ``instruction`` appended to the system message (one is added if missing)."""
    copied = [dict(m) for m in messages]
    if copied and copied[0].get("role") == "system":
        copied[0]["content"] = f"{copied[0].get('content') or ''}\n\n{instruction}".lstrip()
    else:
        copied.insert(0, {"role": "system", "content": instruction})
    return copied


def _message(envelope: dict[str, Any]) -> tuple[str, str | None, str]:
    choice = envelope["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    text = content if isinstance(content, str) else ""
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    model = envelope.get("model")
    return text, finish if isinstance(finish, str) else None, model if isinstance(model, str) else ""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: Any, fallback: int) -> int:
    return int(value) if _is_number(value) and value >= 0 else fallback


def _scrub(text: str, key: str | None) -> str:
    """Text from elsewhere (an error body, an exception) with the key removed, should it echo it."""
    return text.replace(key, "[redacted]") if key else text


def _error_message(body: bytes, key: str | None) -> str:
    """The endpoint's own error message, short and without the key."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        found = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else data.get("message")
        if isinstance(found, str):
            text = found
    text = " ".join(_scrub(text, key).split())
    return text[:REASON_CHARS] + ("..." if len(text) > REASON_CHARS else "")


def _hint(status: int, key_env: str | None) -> str:
    if status in (401, 403):
        return f" (check the key in {key_env})" if key_env else " (the endpoint wants a key: set model.api_key_env)"
    if status == 404:
        return " (check base_url and model)"
    if status == 402:
        return " (the account is out of credit)"
    return ""


__all__ = [
    "ChatClient",
    "ChatResult",
    "ModelOutputInvalid",
    "ModelUnavailable",
    "UnavailableKind",
    "approx_tokens",
    "deadline_after",
    "extract_json_text",
    "json_instruction",
    "parse_output",
    "parse_retry_after",
    "with_instruction",
]
