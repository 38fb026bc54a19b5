"""Posting to an OpenAI-compatible chat-completions endpoint, standard library only.

One :class:`Transport` per endpoint. :meth:`Transport.send` POSTs a request body and
returns the 2xx answer. It retries 429 (honouring ``Retry-After``), 5xx, timeouts,
connection errors and provider errors sent with a 200 (OpenRouter's ``{"error": ...}``
body, a choice with ``finish_reason: "error"``) with exponential backoff and jitter, and never waits or reads past the
run's deadline: every socket wait is bounded by it, however slowly the server trickles.
Other errors are final. Everything that gives up raises :class:`ModelUnavailable`; the
API key never appears in its message.
"""

from __future__ import annotations

import http.client
import json
import random
import ssl
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Literal
from urllib.parse import urlsplit

from org.contracts.supervisors import ModelConfig
from org.kernel.log import logger

#: Why a model could not be used, for run records and statistics.
UnavailableKind = Literal["no_key", "unreachable", "rejected", "budget", "token_cap", "deadline", "ledger"]

#: Statuses worth another attempt: rate limits, timeouts and server trouble.
RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
#: The longest single pause between attempts, whatever the backoff or Retry-After says.
MAX_DELAY_SECONDS = 120.0
#: An attempt left less time than this after a pause cannot get an answer: the pause is not taken.
MIN_ATTEMPT_SECONDS = 0.25
#: An answer larger than this is refused unread.
MAX_RESPONSE_BYTES = 4_000_000
#: Characters of an endpoint's error message kept in a reason.
REASON_CHARS = 200


class ModelUnavailable(Exception):
    """The model cannot be used now (no key, unreachable, refused, budget or deadline).

    Callers skip the run with one log line naming :attr:`reason`; :attr:`kind` sorts the
    cause. The message never contains the key.
    """

    def __init__(self, reason: str, kind: UnavailableKind = "unreachable", status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.status = status  #: the HTTP status of a refused request


@dataclass(frozen=True)
class Answer:
    """An HTTP answer as received."""

    status: int
    headers: http.client.HTTPMessage
    body: bytes
    complete: bool = True  #: False: larger than MAX_RESPONSE_BYTES, only its start was read


@dataclass(frozen=True)
class _Failure:
    reason: str
    retryable: bool
    kind: UnavailableKind = "unreachable"
    retry_after: float | None = None
    status: int | None = None


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


class Clock:
    """Where the model's calls read the time and wait between attempts: the system's clock, or
    a test's (deadlines and backoff are then checked without depending on the machine's speed)."""

    monotonic = staticmethod(time.monotonic)
    sleep = staticmethod(time.sleep)


class Transport:
    """POSTs to ``<base_url>/chat/completions`` with the config's timeout, retries and backoff."""

    def __init__(self, model_config: ModelConfig, rng: random.Random | None = None, clock: Clock | None = None):
        self.config = model_config
        self._rng = rng or random.Random()
        self.clock = clock or Clock()
        parts = urlsplit(model_config.base_url)
        self._https = parts.scheme == "https"
        self.host = parts.hostname or ""
        self._port = parts.port
        self._path = parts.path.rstrip("/") + "/chat/completions"
        #: host[:port], as reasons name the endpoint
        self.endpoint = self.host + (f":{parts.port}" if parts.port else "")

    def send(self, body: bytes, headers: dict[str, str], deadline: float, key: str | None) -> tuple[Answer, int]:
        """The first 2xx answer and how many attempts it took; :class:`ModelUnavailable` otherwise.

        ``deadline`` is a ``time.monotonic()`` instant; ``key`` is scrubbed from every reason.
        """
        attempt, first_reason = 0, None
        while True:
            attempt += 1
            now = self.clock.monotonic()
            if now >= deadline:
                raise ModelUnavailable(f"no usable answer from {self.endpoint} within the run's time budget", "deadline")
            outcome = self._attempt(body, headers, min(deadline, now + self.config.timeout_seconds), key)
            if isinstance(outcome, Answer):
                return outcome, attempt
            if not outcome.retryable:
                raise ModelUnavailable(outcome.reason, outcome.kind, outcome.status)
            first_reason = first_reason or outcome.reason
            if attempt > self.config.max_retries:
                # a first failure unlike the last is often the cause (a timeout whose answer was lost)
                first = f"; the first: {first_reason}" if first_reason != outcome.reason else ""
                raise ModelUnavailable(f"{outcome.reason} (gave up after {attempt} attempts{first})", outcome.kind, outcome.status)
            delay = self._delay(attempt, outcome.retry_after)
            if self.clock.monotonic() + delay + MIN_ATTEMPT_SECONDS >= deadline:
                raise ModelUnavailable(f"{outcome.reason}; no time left for another attempt within the run's time budget",
                                       "deadline")
            logger.debug("model call to %s: %s; retry %d of %d in %.1f s", self.endpoint, outcome.reason,
                         attempt, self.config.max_retries, delay)
            self.clock.sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = self.config.backoff_seconds * 2 ** (attempt - 1) * self._rng.uniform(0.5, 1.5)
        return min(MAX_DELAY_SECONDS, max(backoff, retry_after or 0.0))

    def _attempt(self, body: bytes, headers: dict[str, str], until: float, key: str | None) -> Answer | _Failure:
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
            return answer if not answer.complete else provider_failure(answer, self.endpoint, key) or answer
        message = error_message(answer.body, key)
        reason = f"HTTP {answer.status} from {self.endpoint}" + (f": {message}" if message else "")
        if answer.status in RETRY_STATUSES:
            return _Failure(reason, retryable=True, retry_after=parse_retry_after(answer.headers.get("Retry-After")))
        return _Failure(reason + _hint(answer.status, self.config.api_key_env), retryable=False,
                        kind="budget" if answer.status == 402 else "rejected", status=answer.status)

    def _post(self, body: bytes, headers: dict[str, str], until: float) -> Answer:
        """One POST, every socket wait bounded by ``until``, however the server trickles."""
        def remaining() -> float:
            left = until - self.clock.monotonic()
            if left <= 0:
                raise TimeoutError("deadline")
            return left

        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        connection = cls(self.host, self._port, timeout=remaining())
        try:
            connection.connect()
            sock = connection.sock
            sock.settimeout(remaining())
            connection.request("POST", self._path, body=body, headers=headers)
            sock.settimeout(remaining())
            response = connection.getresponse()
            chunks, size = [], 0
            while not response.isclosed():
                # With ``Connection: close`` (or HTTP/1.0) http.client hands the socket to the
                # response and closes it once the body is read: a timeout set then fails (EBADF).
                sock.settimeout(remaining())
                chunk = response.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:  # answered (and paid for): not read further, never asked again
                    return Answer(response.status, response.headers, b"".join(chunks), complete=False)
                chunks.append(chunk)
            return Answer(response.status, response.headers, b"".join(chunks))
        finally:
            connection.close()


def provider_failure(answer: Answer, endpoint: str, key: str | None) -> _Failure | None:
    """A 200 that is an error: an ``error`` body instead of a completion, or a choice that ended in an error.

    Retried like a 5xx when its code is one (or it has none); other codes are final.
    """
    try:
        data = json.loads(answer.body)
    except ValueError:
        return None  # not JSON at all: the client says so
    if not isinstance(data, dict):
        return None
    choices = data.get("choices")
    error = data.get("error")
    if error is not None and not choices:
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and not isinstance(code, bool) else None
        message = error_message(answer.body, key)
        reason = f"{endpoint} answered 200 with an error" + (f" {status}" if status else "") + (f": {message}" if message else "")
        if status is None or status in RETRY_STATUSES:
            return _Failure(reason, retryable=True)
        return _Failure(reason, retryable=False, kind="budget" if status == 402 else "rejected", status=status)
    first = choices[0] if isinstance(choices, list) and choices else None
    if isinstance(first, dict) and first.get("finish_reason") == "error":
        detail = first.get("error")
        message = detail.get("message") if isinstance(detail, dict) else detail if isinstance(detail, str) else ""
        text = " ".join(_scrub(str(message or ""), key).split())[:REASON_CHARS]
        return _Failure(f"the model behind {endpoint} failed while answering (finish_reason error)" + (f": {text}" if text else ""),
                        retryable=True)
    return None


def error_message(body: bytes, key: str | None) -> str:
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


def _scrub(text: str, key: str | None) -> str:
    """Text from elsewhere (an error body, an exception) with the key removed, should it echo it."""
    return text.replace(key, "[redacted]") if key else text


def _hint(status: int, key_env: str | None) -> str:
    if status in (401, 403):
        return f" (check the key in {key_env})" if key_env else " (the endpoint wants a key: set model.api_key_env)"
    if status == 404:
        return " (check base_url and model)"
    if status == 402:
        return " (the account is out of credit)"
    return ""


__all__ = [
    "MAX_RESPONSE_BYTES",
    "RETRY_STATUSES",
    "Answer",
    "ModelUnavailable",
    "Transport",
    "UnavailableKind",
    "error_message",
    "parse_retry_after",
    "provider_failure",
]
