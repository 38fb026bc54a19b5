"""A headless Chromium driven over the Chrome DevTools Protocol, for the pages' tests.

Needs Debian's ``chromium`` (or ``$A0ORG_TEST_CHROMIUM``) and the ``websocket-client``
package; :func:`browser_or_skip` skips the test with the reason when either is missing.
Nothing is downloaded: the browser starts with a fresh profile and every background
service off. Screenshots go to the test's folder and, when ``$A0ORG_TEST_ARTEFACTS`` names
a folder, there too.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-default-apps",
         "--no-default-browser-check", "--window-size=1280,900", "--remote-debugging-port=0")
ARTEFACTS = "A0ORG_TEST_ARTEFACTS"


def chromium_path() -> str | None:
    return os.environ.get("A0ORG_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, profile: Path, shots: Path):
        import websocket

        self.shots = shots
        self.process = subprocess.Popen([chromium_path(), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        pages = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        page = next(p for p in pages if p.get("type") == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')} {result['exceptionDetails'].get('exception', {}).get('description', '')}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"the page never showed: {expression}\n{self.evaluate('document.body.innerText')}")
            time.sleep(0.1)

    def screenshot(self, name: str) -> Path:
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"])
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / name
        path.write_bytes(data)
        if os.environ.get(ARTEFACTS):
            Path(os.environ[ARTEFACTS]).mkdir(parents=True, exist_ok=True)
            (Path(os.environ[ARTEFACTS]) / name).write_bytes(data)
        return path

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
        self.process.kill()
        self.process.wait(timeout=30)


def browser_or_skip(tmp_path: Path) -> Browser:
    if chromium_path() is None:
        pytest.skip("no chromium: install Debian's chromium package (apt-get install chromium) to run the browser tests")
    try:
        import websocket  # noqa: F401
    except ImportError:
        pytest.skip("no websocket-client: pip install websocket-client (in the test extras) to run the browser tests")
    return Browser(tmp_path / "chromium-profile", tmp_path / "screenshots")
