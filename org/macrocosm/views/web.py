"""The XO page's web server: the standard library's ``http.server``, read-only (GET only).

Loopback by default. Bound to another address it needs a token, given in the page's address
(``?token=...``) or as ``Authorization: Bearer ...``; on loopback a request naming another host
is refused (a web page elsewhere cannot make the browser ask this server through a name it
controls). The page, its script and its style hold no data; only the JSON documents do, and
those need the token. Every answer forbids framing and any script or style from elsewhere.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from ..volume import VolumeLayout
from .dashboard import EventCache, unit_events, units_document

ENV_TOKEN = "A0ORG_DASHBOARD_TOKEN"
STATIC = {"/": ("xo.html", "text/html; charset=utf-8"), "/xo.js": ("xo.js", "text/javascript; charset=utf-8"),
          "/page.css": ("page.css", "text/css; charset=utf-8")}
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class BindError(ValueError):
    pass


def parse_bind(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise BindError(f"--http {text!r}: give HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def static_file(name: str) -> bytes:
    return resources.files("org.macrocosm.views").joinpath("static", name).read_bytes()


def make_handler(routes: dict[str, Callable[[dict[str, list[str]]], dict[str, Any]]], token: str | None,
                 allowed_hosts: set[str] | None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "a0org-dashboard"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass  # the page polls every few seconds; a line each would drown the terminal

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            for name, value in HEADERS.items():
                self.send_header(name, value)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, data: dict[str, Any]) -> None:
            self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

        def _authorised(self, query: dict[str, list[str]]) -> bool:
            if token is None:
                return True
            given = (query.get("token") or [""])[0]
            header = self.headers.get("Authorization", "")
            if header.startswith("Bearer "):
                given = header[len("Bearer "):]
            return hmac.compare_digest(given.encode(), token.encode())

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if allowed_hosts is not None and (self.headers.get("Host") or "").lower() not in allowed_hosts:
                self._json(421, {"error": "this server answers only under its own address"})
                return
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            if parts.path in STATIC:
                name, kind = STATIC[parts.path]
                self._send(200, static_file(name), kind)
            elif parts.path in routes:
                if not self._authorised(query):
                    self._json(401, {"error": "a token is needed: open the page with ?token=..."})
                    return
                try:
                    self._json(200, routes[parts.path](query))
                except Exception as exc:  # the page shows it and keeps polling
                    self._json(500, {"error": f"{type(exc).__name__}: {exc}"})
            else:
                self._json(404, {"error": "not found"})

        do_HEAD = do_GET

        def _read_only(self) -> None:
            self._json(405, {"error": "read-only"})

        do_POST = do_PUT = do_DELETE = do_PATCH = _read_only

    return Handler


def make_server(volume: Path | str, bind: str = "127.0.0.1:0", token: str | None = None,
                home: Path | str | None = None) -> ThreadingHTTPServer:
    """The server, bound (port 0: any free one), not yet serving; :class:`BindError` when the address needs a token.
    With the XO's ``home``, the page shows what the XO knows (pauses, nudges) and its event log."""
    host, port = parse_bind(bind)
    loopback = is_loopback(host)
    if not loopback and not token:
        raise BindError(f"--http {bind}: not a loopback address; give a token (--token or ${ENV_TOKEN}) to bind there")
    layout = VolumeLayout(volume)
    cache = EventCache(Path(home) if home is not None else layout.root / "xo")
    lock = threading.Lock()  # one reader of the volume at a time: polls from several tabs share the cache

    def units(query: dict[str, list[str]]) -> dict[str, Any]:
        with lock:
            return units_document(layout, cache, home=home)

    def events(query: dict[str, list[str]]) -> dict[str, Any]:
        with lock:
            return unit_events(cache, (query.get("unit") or [""])[0])

    server = ThreadingHTTPServer((host, port), BaseHTTPRequestHandler)  # bound first: the port may have been 0
    server.daemon_threads = True
    bound = server.server_address[1]
    allowed = {f"{name}:{bound}" for name in ("127.0.0.1", "localhost", "[::1]", host)} if loopback else None
    server.RequestHandlerClass = make_handler({"/api/units": units, "/api/events": events}, token, allowed)
    return server


def main(volume: Path | str, bind: str, token: str | None, home: Path | str | None = None) -> int:
    layout = VolumeLayout(volume)
    if not layout.root.is_dir():
        print(f"{layout.root}: not a folder; pass the shared volume with --volume", file=sys.stderr)
        return 2
    try:
        server = make_server(volume, bind, token, home)
    except BindError as exc:
        print(f"a0org dashboard: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"a0org dashboard: cannot listen on {bind}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in str(host) else host
    print(f"dashboard of {layout.root}: http://{shown}:{port}/{'?token=...' if token else ''} (read-only; Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
