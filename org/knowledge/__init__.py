"""Knowledge store and directive queue: the two channels from the supervisors to the agent.

- :class:`KnowledgeStore`: markdown documents under a root (conventions, design, lessons,
  domain), ownership per supervisor, a person's documents respected, ``_index.md``,
  change logs, promotion from provisional to established, the review queue.
- :func:`project_knowledge_section`: the ``## PROJECT KNOWLEDGE`` prompt section.
- :class:`DirectiveQueue`: pending directives, their order, aging and cap, and the
  ``## ACTIVE DIRECTIVES`` prompt section.
- :func:`redact`: secrets out of everything written.

See docs/knowledge.md.
"""

from typing import TYPE_CHECKING

from org.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "redact": "org.kernel.redact",
    **dict.fromkeys(("DirectiveQueue", "TaskOutcome", "addressed_ids", "consumption_order", "default_queue_path"), ".directives"),
    "Document": ".documents",
    **dict.fromkeys(("estimate_tokens", "project_knowledge_section", "select_documents"), ".selection"),
    **dict.fromkeys(("KnowledgeStore", "OwnershipError", "ReviewError", "WriteOutcome", "check_owner", "default_root"), ".store"),
})

if TYPE_CHECKING:
    from org.kernel.redact import redact

    from .directives import (
        DirectiveQueue,
        TaskOutcome,
        addressed_ids,
        consumption_order,
        default_queue_path,
    )
    from .documents import Document
    from .selection import estimate_tokens, project_knowledge_section, select_documents
    from .store import (
        KnowledgeStore,
        OwnershipError,
        ReviewError,
        WriteOutcome,
        check_owner,
        default_root,
    )

__all__ = [
    "DirectiveQueue",
    "Document",
    "KnowledgeStore",
    "OwnershipError",
    "ReviewError",
    "TaskOutcome",
    "WriteOutcome",
    "addressed_ids",
    "check_owner",
    "consumption_order",
    "default_queue_path",
    "default_root",
    "estimate_tokens",
    "project_knowledge_section",
    "redact",
    "select_documents",
]
