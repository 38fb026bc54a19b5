"""Knowledge store and directives: what the LLM-backed supervisors hand to the agent.

Two channels, as in the design: *directives* (things the agent must deal with, kept in a
queue file) and *knowledge documents* (markdown files with YAML front matter under the
knowledge root, injected into later prompts). A person may flag or confirm items through
the review queue (``_review/R<n>.json``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from .common import Contract, Identifier, SchemaVersion, Timestamp
from .vocabulary import CATEGORIES  # noqa: F401  (re-exported)

#: The store's folders; each belongs to one supervisor (see :data:`OWNERSHIP`).
KnowledgeCategory = Literal["conventions", "design", "lessons", "domain"]

#: The supervisors and the folders each may write; nothing else writes documents.
OWNERSHIP: dict[str, tuple[str, ...]] = {
    "code_style": ("conventions",),
    "design": ("design",),
    "internaliser": ("lessons", "domain"),
}
SUPERVISOR_IDS: tuple[str, ...] = tuple(OWNERSHIP)

#: The author of a document a person wrote or approved; supervisors never overwrite it.
HUMAN = "human"

DocumentStatus = Literal["provisional", "established", "deprecated"]

#: Document file stem: what a supervisor names a document, e.g. ``error_handling``.
DocumentName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]

#: Relevance keywords: lower-case words matched against the current domain and plan.
Keyword = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.+-]{0,39}$")]

DirectiveType = Literal["functional", "cleanup"]
DirectivePriority = Literal["critical", "normal", "low"]
DIRECTIVE_ID_PATTERN = r"^D[1-9][0-9]{0,8}$"
REVIEW_ID_PATTERN = r"^R[1-9][0-9]{0,8}$"


class KnowledgeDocument(Contract):
    """The YAML front matter of a knowledge document the pack wrote.

    A document whose ``author`` is ``human`` (or that has no front matter of the pack's)
    is a person's: read and injected, never overwritten by a supervisor.
    """

    schema_version: SchemaVersion = 1
    title: str = Field(min_length=1, max_length=200)
    category: KnowledgeCategory = Field(description="The folder the document lives in.")
    status: DocumentStatus = Field("provisional", description="provisional: a supervisor's best guess; established: confirmed by clean tasks or a person; deprecated: no longer applies.")
    author: Identifier = Field(description="The supervisor that created it (code_style, design, internaliser), or human.")
    last_updated_by: Identifier
    updated_after_task: int | None = Field(None, ge=0, description="Task count when it was last written.")
    created_at: Timestamp
    updated_at: Timestamp
    clean_tasks: int = Field(0, ge=0, description="Tasks completed without problems since it was last written; promotes provisional to established.")
    domains: list[Keyword] = Field(default_factory=list, max_length=20, description="Areas it applies to, matched against the agent's current domain.")
    tags: list[Keyword] = Field(default_factory=list, max_length=20, description="Keywords matched against the current plan or request.")


class KnowledgeDraft(Contract):
    """What a supervisor asks the store to write: one document, whole.

    The store fills in authorship, times, status and the change log; ``change`` is the
    change log line (what changed and why).
    """

    category: KnowledgeCategory
    name: DocumentName = Field(description="File stem: the document is <category>/<name>.md.")
    title: str = Field(min_length=1, max_length=200)
    rules: list[Annotated[str, StringConstraints(min_length=1, max_length=500)]] = Field(default_factory=list, max_length=30)
    examples: str = Field("", max_length=4000)
    rationale: str = Field("", max_length=2000)
    domains: list[Keyword] = Field(default_factory=list, max_length=20)
    tags: list[Keyword] = Field(default_factory=list, max_length=20)
    change: str = Field("", max_length=300, description="Change log line; empty gives 'created' or 'updated'.")
    status: Literal["provisional", "deprecated"] = Field("provisional", description="deprecated: the supervisor withdraws the document.")


class DirectiveDraft(Contract):
    """A directive as a supervisor states it (the design's fields)."""

    type: DirectiveType = Field(description="functional: change of approach; cleanup: consistency work.")
    source: Identifier = Field(description="The supervisor that created it.")
    description: str = Field(min_length=1, max_length=300, description="What needs to be done (about 200 characters).")
    rationale: str = Field("", max_length=300, description="Why it needs to be done (about 200 characters).")
    priority: DirectivePriority = "normal"
    files: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] = Field(default_factory=list, max_length=30)


class Directive(DirectiveDraft):
    """A directive in the queue: a draft with its id and age."""

    id: str = Field(pattern=DIRECTIVE_ID_PATTERN, description="Shown to the agent; it writes [done D12] once dealt with.")
    created_task: int = Field(ge=0, description="Completed tasks when it was queued.")
    age: int = Field(0, ge=0, description="Tasks completed since it was queued.")
    created_at: Timestamp


class DirectiveRecord(Contract):
    """A directive that left the queue, and why."""

    id: str = Field(pattern=DIRECTIVE_ID_PATTERN)
    description: str
    outcome: Literal["addressed", "aged_out", "capped"]
    by: str = Field(description="Who addressed it (agent, a supervisor, a person), or the queue itself.")
    task: int = Field(ge=0)
    at: Timestamp


class DirectiveQueueFile(Contract):
    """The directive queue on disk: ``<organizations>/supervisors/directives.json``."""

    schema_version: SchemaVersion = 1
    next_id: int = Field(1, ge=1)
    tasks_completed: int = Field(0, ge=0)
    pending: list[Directive] = Field(default_factory=list)
    history: list[DirectiveRecord] = Field(default_factory=list, description="The most recent directives that left the queue.")


class ReviewItem(Contract):
    """An item flagged for a person: ``_review/R<n>.json`` under the knowledge root.

    Either a held-back ``draft`` (approve writes it as established, reject drops it), a
    held-back ``directive`` (approve queues it, reject drops it), or an existing
    ``document`` to confirm (approve establishes it, reject deprecates it).
    """

    schema_version: SchemaVersion = 1
    id: str = Field(pattern=REVIEW_ID_PATTERN)
    source: Identifier = Field(description="The supervisor that flagged it.")
    reason: str = Field("", max_length=500)
    task: int | None = Field(None, ge=0)
    created_at: Timestamp
    draft: KnowledgeDraft | None = None
    directive: DirectiveDraft | None = Field(None, description="A directive held back until a person accepts it: quarantined, "
                                             "critical, or every directive when directives.require_approval is on.")
    quarantined: list[Annotated[str, StringConstraints(max_length=200)]] = Field(
        default_factory=list, max_length=20,
        description="Why the item was quarantined instead of reaching the agent (a command or path outside the project, ...).")
    document: str | None = Field(None, pattern=r"^(conventions|design|lessons|domain)/[a-z0-9][a-z0-9_-]{0,63}\.md$")
    replaces_hand_written: bool = Field(False, description="The draft targets a person's document; approving replaces it (the old text is kept in _review/replaced/).")
    status: Literal["pending", "approved", "rejected"] = "pending"
    decided_at: Timestamp | None = None
    decided_by: str | None = None

    @model_validator(mode="after")
    def _one_subject(self) -> ReviewItem:
        if sum(subject is not None for subject in (self.draft, self.document, self.directive)) != 1:
            raise ValueError("give exactly one of draft, directive or document")
        return self
