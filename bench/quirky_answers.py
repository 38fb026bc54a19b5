#!/usr/bin/env python
"""How many quirky but valid model answers the supervisors' model client accepts.

Each answer below holds a valid code style supervisor's answer with one quirk models
are known for (prose around the JSON, a ``<think>`` preamble, a fence on the JSON's own
line, a byte-order mark, ``content`` as a list of parts, an extra field, an over-long
summary, ...). A loopback server gives every request of a case the same answer, so a
repair round cannot swap in a clean one. The script uses only the client's public call
(``ChatClient.complete``), so it runs against older versions of the pack too::

    python bench/quirky_answers.py                    # this checkout
    PYTHONPATH=/path/to/older/checkout python bench/quirky_answers.py

It prints one JSON object per case and a total line (``accepted`` of ``cases``).
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if not any("org" in p and Path(p, "org").is_dir() for p in sys.path[:1]):
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # an explicit PYTHONPATH wins

from org.contracts.supervisor_outputs import CodeStyleOutput  # noqa: E402
from org.contracts.supervisors import ModelConfig  # noqa: E402
from org.llm import ChatClient, deadline_after  # noqa: E402

DRAFT = {"category": "conventions", "name": "errors", "title": "Error handling",
         "rules": ["Raise ToolError with a message, never a bare Exception"], "examples": "Good: raise ToolError(path)"}
ANSWER = {"conventions_updated": [DRAFT], "inconsistencies": ["org/io.py raises Exception"],
          "directives": [{"type": "cleanup", "description": "Raise ToolError in org/io.py", "files": ["org/io.py"]}],
          "summary": "One convention written, one cleanup directive."}
TEXT = json.dumps(ANSWER)
PRETTY = json.dumps(ANSWER, indent=2)


def _with(**changes: Any) -> str:
    return json.dumps({**ANSWER, **changes})


#: name -> message content (a string, or a list of content parts)
CASES: dict[str, Any] = {
    "clean JSON": TEXT,
    "fenced block on its own lines": f"```json\n{PRETTY}\n```",
    "prose before": f"Here is my review of the recent work:\n{TEXT}",
    "prose before and after": f"Here is my review:\n\n{PRETTY}\n\nLet me know if you want more detail.",
    "fence after prose, prose after": f"Sure.\n```json\n{PRETTY}\n```\nThese are my findings.",
    "fence on the JSON's own line": f"```json {TEXT}```",
    "fence without a language on the same line": f"```{TEXT}```",
    "<think> preamble": f"<think>\nThe user wants a JSON object. Conventions first.\n</think>\n{TEXT}",
    "<think> preamble with braces": f"<think>Schema says {{\"summary\": ...}}; keep it short.</think>\n\n{TEXT}",
    "<thinking> preamble and a fence": f"<thinking>ok</thinking>\n```json\n{PRETTY}\n```",
    "byte-order mark": "\ufeff" + TEXT,
    "byte-order mark and leading blank lines": "\n\n\ufeff" + PRETTY,
    "content as a list of parts": [{"type": "text", "text": TEXT[:50]}, {"type": "text", "text": TEXT[50:]}],
    "content parts with a fence": [{"type": "text", "text": f"```json\n{PRETTY}\n```"}],
    "one extra top-level field": _with(confidence="high"),
    "one extra field in a directive": _with(directives=[{**ANSWER["directives"][0], "effort": "small"}]),
    "one extra field in a document": _with(conventions_updated=[{**DRAFT, "status_note": "new"}]),
    "over-long summary": _with(summary="The recent work is mostly consistent. " * 20),
    "over-long rationale": _with(directives=[{**ANSWER["directives"][0], "rationale": "Consistency. " * 40}]),
    "over-long finding line": _with(inconsistencies=["org/io.py raises Exception " * 20]),
    "too many inconsistencies": _with(inconsistencies=[f"file{n}.py raises Exception" for n in range(40)]),
    "directive type in capitals": _with(directives=[{**ANSWER["directives"][0], "type": "Cleanup", "priority": "LOW"}]),
    "trailing prose with braces": f"{TEXT}\n\nNote: I left {{other}} files alone.",
    "two objects, the schema echoed first": f'The schema: {{"type": "object"}}\nMy answer: {TEXT}',
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    content: Any = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"id": "x", "object": "chat.completion", "model": "bench",
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": type(self).content},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 100, "completion_tokens": 50}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def run_case(content: Any) -> tuple[bool, int, str]:
    """Accepted?, requests made, and the reason when not."""
    handler = type("Handler", (_Handler,), {"content": content})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    calls = [0]
    original = handler.do_POST

    def counted(self: Any) -> None:
        calls[0] += 1
        original(self)

    handler.do_POST = counted  # type: ignore[method-assign]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = ModelConfig(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="bench", api_key_env=None,
                             max_retries=0, daily_budget_usd=None)
        client = ChatClient(config)
        try:
            client.complete([{"role": "user", "content": "Review."}], schema=CodeStyleOutput, deadline=deadline_after(10))
            return True, calls[0], ""
        except Exception as exc:  # ModelOutputInvalid in both versions
            return False, calls[0], getattr(exc, "reason", str(exc))[:120]
    finally:
        server.shutdown()
        server.server_close()


def main() -> int:
    import org

    accepted = 0
    for name, content in CASES.items():
        ok, calls, reason = run_case(content)
        accepted += ok
        print(json.dumps({"case": name, "accepted": ok, "requests": calls, "reason": reason}))
    print(json.dumps({"name": "quirky_answers_accepted", "value": accepted, "of": len(CASES), "org": str(Path(org.__file__).parent)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
