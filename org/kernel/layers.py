"""Read-only views of the state other layers keep on the agent.

HTN (``agent._htn_state``) and BST (``agent._bst_store``) come from optional layers.
When present but malformed, the problem is logged once and the layer is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .context_fill import ContextFill, context_fill
from .log import warn_once
from .values import plain_number

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


def _shown(value: Any) -> str:
    """A value for a log line, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


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
        warn_once(f"agent._htn_state: expected a dict, found {type(state).__name__}; HTN state ignored", key="agent._htn_state")
        return None
    turns = state.get("turns_since_progress")
    if not plain_number(turns, 0, MAX_TURNS):
        warn_once(f"agent._htn_state.turns_since_progress: expected a non-negative number of turns, found {_shown(turns)}; HTN state ignored",
                  key="agent._htn_state.turns_since_progress")
        return None
    return HtnView(int(turns), _text(state.get("current_step")), _text(state.get("plan_name") or state.get("plan_id")))


def read_bst(agent: Any) -> BstView | None:
    store = getattr(agent, "_bst_store", None)
    if store is None:
        return None
    if not isinstance(store, dict):
        warn_once(f"agent._bst_store: expected a dict, found {type(store).__name__}; BST state ignored", key="agent._bst_store")
        return None
    belief = store.get(BST_BELIEF_KEY)
    if belief is None:
        return None
    if not isinstance(belief, dict):
        warn_once(f"agent._bst_store[{BST_BELIEF_KEY!r}]: expected a dict, found {type(belief).__name__}; BST state ignored",
                  key="agent._bst_store.belief")
        return None
    domain = belief.get("domain")
    if not domain:
        return None
    if not isinstance(domain, str):
        warn_once(f"agent._bst_store[{BST_BELIEF_KEY!r}].domain: expected text, found {_shown(domain)}; BST state ignored",
                  key="agent._bst_store.belief.domain")
        return None
    if len(domain) > MAX_TEXT:
        warn_once(f"agent._bst_store[{BST_BELIEF_KEY!r}].domain: {len(domain)} characters; cut to {MAX_TEXT}",
                  key="agent._bst_store.belief.domain.length")
        domain = domain[:MAX_TEXT]
    return BstView(domain, _confidence(belief.get("confidence")))


def _confidence(value: Any) -> float | None:
    """A confidence is a probability; anything else is ignored."""
    return float(value) if plain_number(value, 0, 2) and value <= 1 else None


@dataclass(frozen=True, slots=True)
class AgentReadings:
    """What the other layers and the model's context say at one moment: read once, used by all."""

    htn: HtnView | None
    bst: BstView | None
    fill: ContextFill | None


#: No layer's readings: no HTN plan, no BST belief, no context fill known.
NO_LAYERS = AgentReadings(None, None, None)


def read_agent(agent: Any) -> AgentReadings:
    return AgentReadings(read_htn(agent), read_bst(agent), context_fill(agent))
