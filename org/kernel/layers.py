"""Read-only views of the state other layers keep on the agent.

HTN (``agent._htn_state``) and BST (``agent._bst_store``) come from optional layers.
When present but malformed, the problem is logged once and the layer is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .report import warn_once

BST_BELIEF_KEY = "__bst_belief_state__"


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
    if value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, dict):  # graph plans keep steps as dicts
        for key in ("name", "id", "action"):
            if isinstance(value.get(key), str):
                return value[key]
    return None


def read_htn(agent: Any) -> HtnView | None:
    state = getattr(agent, "_htn_state", None)
    if state is None:
        return None
    if not isinstance(state, dict):
        warn_once(f"agent._htn_state: expected a dict, found {type(state).__name__}; HTN state ignored")
        return None
    turns = state.get("turns_since_progress")
    if isinstance(turns, bool) or not isinstance(turns, (int, float)) or turns < 0:
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
    confidence = belief.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        confidence = None
    return BstView(domain, float(confidence) if confidence is not None else None)
