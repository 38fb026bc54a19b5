"""Pytest fixtures around the scripted OpenAI-compatible server (org/standin/model_server.py).

conftest.py makes the fixtures available to every test module; import the helpers
(``TEST_KEY``, ``KEY_ENV``, ``model_config_for``) where needed.

``llm_server`` is a running :class:`~org.standin.model_server.ScriptedServer` (script it
with ``llm_server.script(...)``, read ``llm_server.requests``) keeping connections open;
``llm_server_both_ways`` runs a test twice, against such a server and one that closes each
connection after its answer (``Connection: close``, as some local servers do): the model
client's tests use it (tests/test_llm_client.py), where connection handling is what is
tested; ``llm_key`` puts
:data:`TEST_KEY` into :data:`KEY_ENV`; ``llm_model`` is a ``ModelConfig`` pointing at the
server with that key and short backoff, so retries take milliseconds.
"""

from __future__ import annotations

import secrets
from typing import Any, Iterator

import pytest

from org.contracts.supervisors import ModelConfig
from org.llm.structured import forget_all
from org.standin.model_server import ScriptedServer

KEY_ENV = "A0ORG_TEST_LLM_KEY"
#: Unique per test run, so a search for it in logs and files finds only real leaks.
TEST_KEY = "sk-or-v1-scripted-" + secrets.token_hex(16)


def model_config_for(server: ScriptedServer, **overrides: Any) -> ModelConfig:
    """A model block for the scripted server: key from :data:`KEY_ENV`, fast retries."""
    fields: dict[str, Any] = {"base_url": server.base_url, "model": "scripted/model", "api_key_env": KEY_ENV,
                              "timeout_seconds": 5.0, "max_retries": 3, "backoff_seconds": 0.01}
    return ModelConfig.model_validate({**fields, **overrides})


@pytest.fixture
def llm_server() -> Iterator[ScriptedServer]:
    """A scripted server on 127.0.0.1 keeping connections open, stopped after the test."""
    yield from _serving("keep-alive")


@pytest.fixture(params=["keep-alive", "close"])
def llm_server_both_ways(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    """A scripted server on 127.0.0.1, stopped after the test; once keeping connections, once closing them."""
    yield from _serving(request.param)


def _serving(connection: str) -> Iterator[ScriptedServer]:
    forget_all()  # the response format each endpoint accepted starts unknown
    with ScriptedServer(connection=connection) as server:
        yield server


@pytest.fixture
def llm_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The test key, set in :data:`KEY_ENV` for this test only."""
    monkeypatch.setenv(KEY_ENV, TEST_KEY)
    return TEST_KEY


@pytest.fixture
def llm_model(llm_server: ScriptedServer, llm_key: str) -> ModelConfig:
    """A model block pointing at ``llm_server``, with the key set."""
    return model_config_for(llm_server)
