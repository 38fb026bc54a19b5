"""The two sections the supervisors add to the agent's prompt: PROJECT KNOWLEDGE and ACTIVE DIRECTIVES.

They go into ``loop_data.extras_temporary``, which Agent-Zero renders as a final
[EXTRAS] message. They are built once a task and kept in ``loop_data.params_persistent``;
a subordinate agent gets the knowledge but not the directives, which are the top agent's
to deal with. The hook hands both dicts over as they are, with the agent read as
:class:`~.task_readings.TaskReadings`.
"""

from __future__ import annotations

from typing import Any

from org.contracts.supervisors import SupervisorsConfig
from org.knowledge.selection import prompt_sections

from . import digests
from .runs import Files, queue_for, store_for
from .task_readings import TaskReadings

#: Extras keys of the two prompt sections (Agent-Zero renders extras as a final [EXTRAS] message).
KNOWLEDGE_EXTRA = "org_knowledge"
DIRECTIVES_EXTRA = "org_directives"
#: Per task, in ``loop_data.params_persistent``: the sections are built once a task.
SECTIONS_KEY = "_org_knowledge_sections"


def add_sections(readings: TaskReadings, persistent: Any, extras: Any, config: SupervisorsConfig, files: Files) -> None:
    """Put the sections into the prompt's ``extras`` (built once a task, kept in ``persistent``)."""
    cached = persistent.get(SECTIONS_KEY) if isinstance(persistent, dict) else None
    if not isinstance(cached, tuple):
        cached = _sections(readings, config, files)
        if isinstance(persistent, dict):
            persistent[SECTIONS_KEY] = cached
    if not isinstance(extras, dict):
        return
    knowledge, directives = cached
    if knowledge:
        extras[KNOWLEDGE_EXTRA] = knowledge
    if directives:
        extras[DIRECTIVES_EXTRA] = directives


def shown_documents(persistent: Any) -> str:
    """The PROJECT KNOWLEDGE section this task's prompt showed ("" when none; ``persistent``: the
    task's ``params_persistent``): each document in it is headed ``### <title> (<path>, <status>)``."""
    cached = persistent.get(SECTIONS_KEY) if isinstance(persistent, dict) else None
    return cached[0] if isinstance(cached, tuple) and cached and isinstance(cached[0], str) else ""


def _sections(readings: TaskReadings, config: SupervisorsConfig, files: Files) -> tuple[str, str]:
    trace = digests.current(readings)
    plan = " ".join(p for p in (readings.plan, trace.user_message[:500] if trace else None) if p)
    top = readings.number == 0
    return prompt_sections(store_for(config, files), queue_for(config, files) if top else None, readings.bst_domain,
                           plan or None, knowledge_budget=config.knowledge.injection_token_budget,
                           total_budget=config.prompt_token_budget, recent_lessons=config.knowledge.recent_lessons)


__all__ = ["DIRECTIVES_EXTRA", "KNOWLEDGE_EXTRA", "SECTIONS_KEY", "add_sections", "shown_documents"]
