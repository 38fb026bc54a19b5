"""The two sections the supervisors add to the agent's prompt: PROJECT KNOWLEDGE and ACTIVE DIRECTIVES.

They go into ``loop_data.extras_temporary``, which Agent-Zero renders as a final
[EXTRAS] message. They are built once a task and kept in ``loop_data.params_persistent``;
a subordinate agent gets the knowledge but not the directives, which are the top agent's
to deal with.
"""

from __future__ import annotations

from typing import Any

from org.contracts.supervisors import SupervisorsConfig
from org.kernel.agent_zero import read_attr
from org.kernel.layers import read_bst, read_htn
from org.knowledge.selection import prompt_sections

from . import digests
from .runs import Files, queue_for, store_for

#: Extras keys of the two prompt sections (Agent-Zero renders extras as a final [EXTRAS] message).
KNOWLEDGE_EXTRA = "org_knowledge"
DIRECTIVES_EXTRA = "org_directives"
#: Per task, in ``loop_data.params_persistent``: the sections are built once a task.
SECTIONS_KEY = "_org_knowledge_sections"


def add_sections(agent: Any, loop_data: Any, config: SupervisorsConfig, files: Files, top: bool) -> None:
    """Put the sections into the prompt's extras (``top``: the agent is the top agent, number 0)."""
    persistent = read_attr(loop_data, "params_persistent")
    cached = persistent.get(SECTIONS_KEY) if isinstance(persistent, dict) else None
    if not isinstance(cached, tuple):
        cached = _sections(agent, config, files, top)
        if isinstance(persistent, dict):
            persistent[SECTIONS_KEY] = cached
    extras = read_attr(loop_data, "extras_temporary")
    if extras is None:
        return
    knowledge, directives = cached
    if knowledge:
        extras[KNOWLEDGE_EXTRA] = knowledge
    if directives:
        extras[DIRECTIVES_EXTRA] = directives


def shown_documents(loop_data: Any) -> str:
    """The PROJECT KNOWLEDGE section this task's prompt showed ("" when none): each document in it is
    headed ``### <title> (<path>, <status>)``."""
    persistent = read_attr(loop_data, "params_persistent")
    cached = persistent.get(SECTIONS_KEY) if isinstance(persistent, dict) else None
    return cached[0] if isinstance(cached, tuple) and cached and isinstance(cached[0], str) else ""


def _sections(agent: Any, config: SupervisorsConfig, files: Files, top: bool) -> tuple[str, str]:
    bst, htn, trace = read_bst(agent), read_htn(agent), digests.current(agent)
    plan = " ".join(p for p in (htn.plan_name if htn else None, htn.current_step if htn else None,
                                trace.user_message[:500] if trace else None) if p)
    return prompt_sections(store_for(config, files), queue_for(config, files) if top else None, bst.domain if bst else None,
                           plan or None, knowledge_budget=config.knowledge.injection_token_budget,
                           total_budget=config.prompt_token_budget, recent_lessons=config.knowledge.recent_lessons)


__all__ = ["DIRECTIVES_EXTRA", "KNOWLEDGE_EXTRA", "SECTIONS_KEY", "add_sections", "shown_documents"]
