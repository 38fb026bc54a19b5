"""A stand-in for the part of Agent-Zero's web server (v0.9.9+/v1.x) a plugin's pages use,
on 127.0.0.1, for the supervision page's tests. Shaped as Agent-Zero's ``helpers/ui_server.py``
and ``helpers/api.py`` serve them (docs/agent-zero.md, "The plugin form"):

* ``GET /plugins/<name>/<path>``: a file of the plugin's ``webui/`` folder, nothing else;
* ``GET /api/csrf_token``: ``{"ok": true, "token": ...}``;
* ``POST /api/plugins/<name>/<handler>``: the class in the plugin's ``api/<handler>.py`` that
  derives from ``helpers.api.ApiHandler``, made with ``(app, lock)``; its ``process(input, request)``
  answers with a dict sent as JSON. The ``X-CSRF-Token`` header must carry the token.

While a handler is loaded and runs, ``helpers.api`` and ``agent`` (with ``AgentContext.get``
answering from the chats given) are provided as stand-ins.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .loader import provided_modules

TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


class ApiHandler:
    """``helpers.api.ApiHandler``: constructed with the app and a lock; ``process`` answers."""

    def __init__(self, app: Any, thread_lock: Any):
        self.app = app
        self.thread_lock = thread_lock

    async def process(self, input: dict, request: Any) -> Any:  # noqa: A002 - Agent-Zero's name
        raise NotImplementedError


class ChatContext:
    """What ``AgentContext.get(id)`` gives a handler: the chat's data."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def get_data(self, key: str) -> Any:
        return self.data.get(key)


class StandInWebUI:
    def __init__(self, plugins: Path, chats: dict[str, dict[str, Any]] | None = None):
        self.plugins = plugins
        self.chats = chats if chats is not None else {}
        self.token = secrets.token_urlsafe(16)
        self.lock = threading.Lock()  # one handler at a time: the stand-in modules are process-wide
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _modules(self):
        chats = self.chats

        class AgentContext:
            @staticmethod
            def get(context_id: str) -> ChatContext | None:
                data = chats.get(context_id)
                return ChatContext(data) if data is not None else None

        api = provided_modules("helpers.api", ApiHandler=ApiHandler, Request=object)
        agent = provided_modules("agent", AgentContext=AgentContext)
        return api, agent

    def call(self, plugin: str, handler: str, body: dict[str, Any]) -> Any:
        path = self.plugins / plugin / "api" / f"{handler}.py"
        if not path.is_file():
            return None
        with self.lock:
            api, agent = self._modules()
            with api, agent:
                spec = importlib.util.spec_from_file_location(f"plugin_api_{plugin}_{handler}", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)  # type: ignore[union-attr]
                cls = next(v for v in vars(module).values() if isinstance(v, type) and issubclass(v, ApiHandler) and v is not ApiHandler)
                return asyncio.run(cls(None, threading.Lock()).process(body, None))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        ui = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/api/csrf_token":
                    self._send(200, json.dumps({"ok": True, "token": ui.token, "runtime_id": "standin"}).encode(), "application/json")
                    return
                parts = self.path.split("?", 1)[0].split("/")
                if len(parts) >= 5 and parts[1] == "plugins" and parts[3] == "webui" and ".." not in parts:
                    file = ui.plugins / parts[2] / "webui" / "/".join(parts[4:])
                    if file.is_file():
                        self._send(200, file.read_bytes(), TYPES.get(file.suffix, "application/octet-stream"))
                        return
                self._send(404, b"not found", "text/plain")

            def do_POST(self) -> None:  # noqa: N802
                parts = self.path.split("?", 1)[0].split("/")
                if self.headers.get("X-CSRF-Token") != ui.token:
                    self._send(403, b"CSRF token missing or invalid", "text/plain")
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                answer = ui.call(parts[3], parts[4], body) if len(parts) == 5 and parts[1:3] == ["api", "plugins"] else None
                if answer is None:
                    self._send(404, b"API endpoint not found", "text/plain")
                else:
                    self._send(200, json.dumps(answer).encode(), "application/json")

        return Handler
