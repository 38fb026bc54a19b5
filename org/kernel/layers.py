"""Read-only views of the state other layers keep on the agent.

HTN (``agent._htn_state``) and BST (``agent._bst_store``) come from optional layers.
When present but malformed, the problem is logged once and the layer is ignored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .report import warn_once

BST_BELIEF_KEY = "__bst_belief_state__"
#: Names longer than this are cut: they end up in steering and in SALUTE reports.
MAX_TEXT = 200
#: More turns than any session has: a larger count is garbage.
MAX_TURNS = 10**9


@dataclass(frozen=True, slots=True)
class HtnView:
    turns_since_progress: int
    current_step: str | None
    plan_name: str | None


@dataclass(frozen=True, slots=True)
class BstView:
    domain: str
    confidence: float | None


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, dict):  # graph plans keep steps as dicts
        value = next((value[key] for key in ("name", "id", "action") if isinstance(value.get(key), str)), None)
    if isinstance(value, int) and abs(value) < 10**18:
        value = str(value)
    return value[:MAX_TEXT] if isinstance(value, str) else None


def read_htn(agent: Any) -> HtnView | None:
    state = getattr(agent, "_htn_state", None)
    if state is None:
        return None
    if not isinstance(state, dict):
        warn_once(f"agent._htn_state: expected a dict, found {type(state).__name__}; HTN state ignored")
        return None
    turns = state.get("turns_since_progress")
    if isinstance(turns, bool) or not isinstance(turns, (int, float)) or not math.isfinite(turns) or not 0 <= turns < MAX_TURNS:
        warn_once(f"agent._htn_state.turns_since_progress: expected a non-negative number, found {turns!r}; HTN state ignored")
        return None
    return HtnView(int(turns), _text(state.get("current_step")), _text(state.get("plan_name") or state.get("plan_id")))


def read_bst(agent: Any) -> BstView | None:
    store = getattr(agent, "_bst_store", None)
    if store is None:
        return None
    if not isinstance(store, dict):
        warn_once(f"agent._bst_store: expected a dict, found {type(store).__name__}; BST state ignored")
        return None
    belief = store.get(BST_BELIEF_KEY)
    if belief is None:
        return None
    if not isinstance(belief, dict):
        warn_once(f"agent._bst_store[{BST_BELIEF_KEY!r}]: expected a dict, found {type(belief).__name__}; BST state ignored")
        return None
    domain = belief.get("domain")
    if not domain:
        return None
    if not isinstance(domain, str):
        warn_once(f"agent._bst_store[{BST_BELIEF_KEY!r}].domain: expected text, found {domain!r}; BST state ignored")
        return None
    if len(domain) > MAX_TEXT:
        warn_once(f"agent._bst_store[{BST_BELIEF_KEY!r}].domain: {len(domain)} characters; cut to {MAX_TEXT}")
        domain = domain[:MAX_TEXT]
    return BstView(domain, _confidence(belief.get("confidence")))


def _confidence(value: Any) -> float | None:
    """A confidence is a probability; anything else is ignored."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if 0.0 <= number <= 1.0 else None
