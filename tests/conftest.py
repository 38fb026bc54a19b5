"""Shared fixtures: an organization folder and a stand-in Agent-Zero session running the
real hook files through the loader contract."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from a0_trees import make_pack  # noqa: E402

# the scripted OpenAI-compatible server's fixtures, for every test module
from llm_server import llm_key, llm_model, llm_server, llm_server_both_ways  # noqa: E402, F401

from org.a0 import hooks  # noqa: E402
from org.contracts import TraceHeader, TraceTurn  # noqa: E402
from org.kernel import store as store_module  # noqa: E402
from org.kernel.log import forget_logged  # noqa: E402
from org.kernel.paths import ENV_HOME  # noqa: E402
from org.kernel.store import OrganizationStore  # noqa: E402
from org.replay import prepare_organization  # noqa: E402
from org.standin.session import StandInSession, TurnResult  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    """Bytecode is cached in a folder of its own, whatever the environment says
    (``PYTHONDONTWRITEBYTECODE``): the suite starts hundreds of Python processes that import the
    pack, and each would otherwise compile it from source again; and each xdist worker would
    rewrite the asserts of every test module again (about 12 s a worker). The folder is pytest's
    own cache (``.pytest_cache``), kept between runs; without the cache plugin, a temporary
    folder for the session. No ``__pycache__`` appears in the checkout. The xdist workers and
    every process a test starts inherit the setting."""
    if hasattr(config, "workerinput"):
        return  # a worker: the controller set its environment
    cache = getattr(config, "cache", None)
    if cache is not None:
        prefix = str(cache.mkdir("bytecode"))  # (a stale file is recompiled: Python checks each against its source)
    else:
        prefix = tempfile.mkdtemp(prefix="a0org-tests-bytecode-")
        config.add_cleanup(lambda: shutil.rmtree(prefix, ignore_errors=True))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode, sys.pycache_prefix = False, prefix


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than there are CPUs. Many tests wait (on the XO's and the
    units' processes, on file-system events, on a scripted model), and the extra worker runs
    meanwhile; more workers than that cost more CPU (each collects the suite, and waiting tests
    poll) than they win: on two slow cores, 3 workers ran the suite in 192 s where 2 took 210 s
    and 4 took 230 s."""
    return (os.cpu_count() or 1) + 1


#: set to 1 to run the tests marked ``registry`` (CI does, in a step of its own)
ENV_REGISTRY_TESTS = "A0ORG_TEST_REGISTRY"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``registry`` tests install from the package registries: a minute each, mostly the
    network's, which the rest of the suite never waits on. They run where asked for."""
    if os.environ.get(ENV_REGISTRY_TESTS) == "1":
        return
    skip = pytest.mark.skip(reason=f"installs from the package registries: set {ENV_REGISTRY_TESTS}=1 to run it (CI does)")
    for item in items:
        if item.get_closest_marker("registry"):
            item.add_marker(skip)


class Session:
    """A stand-in agent running the pack's hook files; turns are dicts in trace format."""

    def __init__(self, home: Path, era: str):
        self.home = home
        self.era = era
        self.standin = StandInSession(era=era)
        self.agent = self.standin.agent
        self.results: list[TurnResult] = []

    def run(self, *turns: dict[str, Any]) -> list[TurnResult]:
        start = len(self.results) + 1
        parsed = [TraceTurn.model_validate({"turn": start + i, **t}) for i, t in enumerate(turns)]
        results = self.standin.run(parsed)
        self.results.extend(results)
        return results

    def steering(self) -> list[tuple[int, str, str]]:
        return [(r.turn, anomaly, text) for r in self.results for anomaly, text in r.steering]

    def anomalies(self) -> list[tuple[int, str]]:
        return [(turn, anomaly) for turn, anomaly, _ in self.steering()]


@pytest.fixture(autouse=True)
def _clean_log_memory():
    forget_logged()
    yield
    forget_logged()


@pytest.fixture
def org_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "organizations"
    home.mkdir()
    monkeypatch.setenv(ENV_HOME, str(home))
    return home


@pytest.fixture
def make_session(org_home):
    """make_session(role="codegen", doctrine={...}, era="D", active=True) -> Session."""

    def factory(role: str = "codegen", doctrine: dict | None = None, era: str = "D", active: bool = True) -> Session:
        prepare_organization(org_home, TraceHeader(kind="header", role=role, doctrine=doctrine or {}))
        if not active:
            (org_home / "active.json").unlink()
        return Session(org_home, era)

    return factory


@pytest.fixture
def fresh_store(monkeypatch):
    """A fresh organization cache per test, re-checking the files every turn (the fault
    tests use it for every test: ``pytestmark = pytest.mark.usefixtures("fresh_store")``).

    Re-checking every turn (instead of at most once a second) makes "the user fixed
    the file" visible on the next turn, and makes "logged once" stricter: the broken
    file is re-read every turn and must still be reported only once.
    """
    monkeypatch.setattr(hooks, "store", OrganizationStore())
    monkeypatch.setattr(store_module, "RECHECK_SECONDS", 0.0)


@pytest.fixture
def home(org_home) -> Path:
    """The replay organization (default role codegen, as shipped: a radio check every turn)."""
    prepare_organization(org_home, TraceHeader(kind="header", role="codegen"))
    assert "radio_check_interval_turns: 1" in (org_home / "roles" / "codegen.yaml").read_text(encoding="utf-8")
    return org_home


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    """A copy of the pack for the installer and doctor (``a0_trees.make_pack``)."""
    return make_pack(tmp_path / "pack")


@pytest.fixture(params=["C", "D"], ids=["v0.9.8", "v1.x"])
def era(request) -> str:
    return request.param


def ok(tool: str, n: int | str, **extra: Any) -> dict:
    """A successful tool call whose output is new (progress)."""
    return {"tool": tool, "args": {"n": n}, "output": f"result {n}", **extra}


def fail(tool: str, args: dict | None = None, output: str = "cat: /x: No such file or directory", **extra: Any) -> dict:
    return {"tool": tool, "args": args or {"path": "/x"}, "output": output, **extra}
