"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and the demo.

It answers real HTTP on a free port from a background thread. Each request to
``.../chat/completions`` takes the next behaviour from a queue::

    with ScriptedServer() as server:
        server.script(Reply.valid(Findings, {"summary": "ok"}), Status(429, retry_after=1), Drop())
        config = ModelConfig(base_url=server.base_url, model="scripted", api_key_env=None)
        ...
        server.requests[0].headers["authorization"]   # every request is recorded

Behaviours: :class:`Reply` (an answer: valid JSON, fenced, malformed, off-schema — any
text, or a list of content parts), :class:`Status` (an HTTP error such as 429 with
``Retry-After``, 500, 502, 503), :class:`ProviderError` (HTTP 200 whose body is an error,
as OpenRouter sends when the provider behind it fails), :class:`Slow` (wait, before the
answer or in the middle of its body) and :class:`Drop` (close the connection without
answering); :class:`For` gives a behaviour to the request whose body names something (a
schema's title), for callers that ask at the same time. With the queue empty it answers
500, so an unexpected extra call shows.

``connection`` picks how it treats connections: ``"keep-alive"`` (HTTP/1.1, the
default), ``"close"`` (HTTP/1.1 with ``Connection: close`` after every answer) or
``"http/1.0"`` (the answer is HTTP/1.0, which closes too), as some local servers do.
It is not a model and not for production use.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Union

from pydantic import BaseModel


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion whose message content is ``content``.

    ``content`` may be a list of content parts (``[{"type": "text", "text": ...}]``).
    ``cost`` adds OpenRouter's ``usage.cost``; ``usage=False`` leaves usage out entirely;
    ``finish_reason="length"`` says the answer was cut off, ``"error"`` that the provider
    failed while answering (``error`` is then the choice's error object).
    """

    content: str | list[Any]
    prompt_tokens: int = 120
    completion_tokens: int = 40
    cost: float | None = None
    finish_reason: str = "stop"
    usage: bool = True
    model: str = "scripted-model"
    error: dict[str, Any] | None = None

    @classmethod
    def valid(cls, schema: type[BaseModel], data: dict[str, Any], **options: Any) -> Reply:
        """An answer that matches ``schema``: ``data`` is validated first, so the script cannot be wrong."""
        return cls(schema.model_validate_json(json.dumps(data)).model_dump_json(), **options)

    @classmethod
    def of(cls, value: BaseModel | dict[str, Any] | list[Any], fenced: bool = False, **options: Any) -> Reply:
        """A JSON answer of ``value`` as is (also data that breaks a schema), optionally in a ```json fence."""
        text = value.model_dump_json(indent=2) if isinstance(value, BaseModel) else json.dumps(value, indent=2)
        return cls(f"Here it is:\n```json\n{text}\n```\n" if fenced else text, **options)

    def body(self) -> dict[str, Any]:
        completion: dict[str, Any] = {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()), "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.content},
                         "finish_reason": self.finish_reason}],
        }
        if self.error is not None:
            completion["choices"][0]["error"] = self.error
        if self.usage:
            usage: dict[str, Any] = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                                     "total_tokens": self.prompt_tokens + self.completion_tokens}
            if self.cost is not None:
                usage["cost"] = self.cost
            completion["usage"] = usage
        return completion


@dataclass(frozen=True)
class Status:
    """An HTTP error answer with an OpenAI-style error body; ``retry_after`` sets that header."""

    code: int
    message: str = "scripted error"
    retry_after: float | str | None = None


@dataclass(frozen=True)
class ProviderError:
    """HTTP 200 with an error body (``{"error": {"code", "message"}}``) instead of a completion."""

    code: int = 502
    message: str = "scripted provider error"

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` (or until :meth:`ScriptedServer.release`) and then behave as ``then``.

    ``stage="before"`` waits before anything is sent; ``"body"`` sends the status line,
    the headers and half of the body first, then waits (a server that trickles).
    """

    seconds: float
    then: Behaviour = field(default_factory=lambda: Reply("{}"))
    stage: str = "before"


@dataclass(frozen=True)
class Drop:
    """Close the connection without answering."""


@dataclass(frozen=True)
class For:
    """``then`` answers only a request whose body contains ``match`` (such as a schema's title).

    Requests made at the same time arrive in no fixed order; ``For`` lets one server
    answer several callers, each with its own script. A request takes the first queued
    behaviour meant for it: a ``For`` that matches, or one that is not a ``For``.
    """

    match: str
    then: Behaviour


Behaviour = Union[Reply, Status, ProviderError, Slow, Drop, For]
Connection = Literal["keep-alive", "close", "http/1.0"]
CONNECTIONS: tuple[Connection, ...] = ("keep-alive", "close", "http/1.0")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server got it; header names are lower case."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    behaviour: str
    received_at: float

    @property
    def body(self) -> Any:
        """The JSON body, or None when it was not JSON."""
        try:
            return json.loads(self.raw_body)
        except ValueError:
            return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests and the demo print what matters themselves

    def setup(self) -> None:
        super().setup()
        if self.server.owner.connection == "http/1.0":
            self.protocol_version = "HTTP/1.0"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no such path: {self.path}"}})
            return
        behaviour = self.server.owner._next(raw)
        self.server.owner._record(RecordedRequest(
            method="POST", path=self.path, headers={k.lower(): v for k, v in self.headers.items()},
            raw_body=raw, behaviour=type(behaviour).__name__, received_at=time.time()))
        self._perform(behaviour)

    def do_GET(self) -> None:
        self._json(404, {"error": {"message": "only POST .../chat/completions is scripted"}})

    def _perform(self, behaviour: Behaviour) -> None:
        if isinstance(behaviour, For):
            self._perform(behaviour.then)
        elif isinstance(behaviour, Drop):
            self._drop()
        elif isinstance(behaviour, Slow):
            self._slow(behaviour)
        elif isinstance(behaviour, Status):
            headers = {"Retry-After": str(behaviour.retry_after)} if behaviour.retry_after is not None else {}
            self._json(behaviour.code, {"error": {"code": behaviour.code, "message": behaviour.message}}, headers)
        else:
            self._json(200, behaviour.body())

    def _slow(self, slow: Slow) -> None:
        if slow.stage == "body" and isinstance(slow.then, (Reply, Status, ProviderError)):
            code, payload = (200, slow.then.body()) if isinstance(slow.then, (Reply, ProviderError)) else (
                slow.then.code, {"error": {"code": slow.then.code, "message": slow.then.message}})
            data = json.dumps(payload).encode("utf-8")
            self._head(code, len(data), {})
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if self.server.owner._held(slow.seconds):
                self.wfile.write(data[len(data) // 2:])
            return
        if self.server.owner._held(slow.seconds):
            self._perform(slow.then)

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _head(self, code: int, length: int, headers: dict[str, str]) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        if self.server.owner.connection == "close":
            self.send_header("Connection", "close")  # http.server closes after this answer
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _json(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self._head(code, len(data), headers or {})
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (a timeout in the test): nothing to answer to


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-answer is part of the script


class ScriptedServer:
    """An OpenAI-compatible server on 127.0.0.1 that answers from a script; see the module doc."""

    def __init__(self, *behaviours: Behaviour, connection: Connection = "keep-alive"):
        if connection not in CONNECTIONS:
            raise ValueError(f"connection must be one of {CONNECTIONS}, not {connection!r}")
        self.connection = connection
        self._queue: deque[Behaviour] = deque(behaviours)
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- lifecycle

    def start(self) -> ScriptedServer:
        """Listen on a free port of 127.0.0.1 and serve from a daemon thread."""
        if self._server is None:
            self._server = _Server(("127.0.0.1", 0), _Handler)
            self._server.owner = self
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="scripted-llm-server", daemon=True)
            self._thread.start()
        return self

    def release(self) -> None:
        """Let every slow answer go now, those waiting and those to come: a test holds answers
        with a long :class:`Slow` and releases them when it has seen what it waits for, so
        that nothing depends on how fast a loaded machine is."""
        self._released.set()

    def _held(self, seconds: float) -> bool:
        """Wait ``seconds`` or until released; False when the server is stopping meanwhile."""
        deadline = time.monotonic() + seconds
        while not self._released.is_set() and not self._stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._released.wait(min(left, 0.05))
        return not self._stopping.is_set()

    def close(self) -> None:
        """Stop serving; slow answers still waiting are cut short."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- script and record

    @property
    def port(self) -> int:
        """The port it listens on (after :meth:`start`)."""
        if self._server is None:
            raise RuntimeError("the scripted server is not running")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """The API root to configure as ``model.base_url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *behaviours: Behaviour) -> ScriptedServer:
        """Queue behaviours for the next requests, in order."""
        with self._lock:
            self._queue.extend(behaviours)
        return self

    @property
    def pending(self) -> int:
        """Behaviours not used yet."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every chat-completions request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Wait until ``count`` requests have been received (at most ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def _next(self, body: bytes = b"") -> Behaviour:
        text = body.decode("utf-8", "replace")
        with self._lock:
            for index, behaviour in enumerate(self._queue):
                match = _match_of(behaviour)
                if match is None or match in text:
                    del self._queue[index]
                    return behaviour
            return Status(500, "the script has no more answers" + (" for this request" if self._queue else ""))

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)


def _match_of(behaviour: Behaviour) -> str | None:
    """What a request's body must contain to take ``behaviour`` (None: any request)."""
    while isinstance(behaviour, Slow):
        behaviour = behaviour.then
    return behaviour.match if isinstance(behaviour, For) else None


__all__ = ["CONNECTIONS", "Behaviour", "Connection", "Drop", "For", "ProviderError", "RecordedRequest", "Reply", "ScriptedServer", "Slow", "Status"]
