"""Without ``active.json`` every hook file is silent: it opens no file and imports nothing
beyond the module it was loaded with (an audit hook watches, for each hook point)."""

from __future__ import annotations

import sys

import pytest
from conftest import fail

from org.contracts import TraceTurn
from org.resources import HOOK_POINTS

_EVENTS: list[tuple[str, str]] = []
_ON = {"point": None}


def _audit(event: str, args: tuple) -> None:
    if _ON["point"] is not None and event in ("open", "import"):
        _EVENTS.append((_ON["point"], f"{event} {args[0]}"))


sys.addaudithook(_audit)  # audit hooks cannot be removed: it records only while a point is called


@pytest.mark.parametrize("point", HOOK_POINTS)
def test_every_hook_point_is_silent_without_an_active_organization(make_session, era, point, monkeypatch):
    for name in [m for m in sys.modules if m.startswith(("org.llm_supervisors", "org.llm.", "org.knowledge"))]:
        monkeypatch.delitem(sys.modules, name)  # so that importing any of them would be seen
    session = make_session(era=era, active=False)
    standin = session.standin
    calls = standin._call  # every hook call of the stand-in goes through here

    async def watched(name: str, **kwargs):
        _ON["point"] = name if name == point else None
        try:
            await calls(name, **kwargs)
        finally:
            _ON["point"] = None

    standin._call = watched
    _EVENTS.clear()
    turns = [TraceTurn.model_validate({"turn": n, **fail("code_execution_tool")}) for n in range(1, 4)]
    standin.run_task("do it", turns)
    assert _EVENTS == []
    assert session.steering() == [] and session.agent.context.log.items == []
