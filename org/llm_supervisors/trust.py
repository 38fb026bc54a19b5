"""What of a valid answer may reach the agent, and what waits for a person.

A valid answer is still the word of a model that read text anyone could have put in the
code. Before anything is written, each directive and document is screened
(:func:`org.knowledge.screening.screen`): one that reaches outside the project, or tells
the agent to ignore its instructions, hide something or act on an authorisation it claims,
is quarantined in the review queue. A critical directive may not jump ahead of other work
on the model's word alone: it is queued as normal, and its critical copy waits for a person.
With ``directives.require_approval`` every new directive waits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from org.contracts.knowledge import DirectiveDraft, KnowledgeDraft
from org.knowledge.screening import ProjectBounds, bounds_of, screen, view

from .codebase import project_roots
from .supervisors import Changes, RunInput, digest_text

CRITICAL_WAITS = "critical: waits for a person before it may come ahead of other work (queued as normal meanwhile)"
APPROVAL_REQUIRED = "directives.require_approval: every new directive waits for a person"


@dataclass
class Held:
    """Items kept from the agent: (what, why in one line, the screening's reasons)."""

    documents: list[tuple[KnowledgeDraft, str, list[str]]] = field(default_factory=list)
    directives: list[tuple[DirectiveDraft, str, list[str]]] = field(default_factory=list)


def project_bounds(run: RunInput) -> ProjectBounds:
    """The project as the run saw it: the tasks' working folders and projects, the hosts its files and tasks name."""
    folders = [d.workdir for d in run.digests if d.workdir] + [str(root) for root in project_roots(run.digests)]
    texts = [digest_text(d) for d in run.digests] + [text for _, text in run.files if text]
    if run.codebase is not None:
        texts += [run.codebase.layout] + [text for _, text in run.codebase.files]
    return bounds_of(folders, texts)


def document_texts(draft: KnowledgeDraft) -> list[str]:
    return [draft.title, *draft.rules, draft.examples, draft.rationale, draft.change]


def directive_texts(draft: DirectiveDraft) -> list[str]:
    return [draft.description, draft.rationale, *draft.files]


def hold_back(changes: Changes, bounds: ProjectBounds, require_approval: bool) -> Held:
    """Take out of ``changes`` what may not reach the agent yet, and say why."""
    held = Held()
    kept_documents = []
    for draft in changes.documents:
        reasons = screen(document_texts(draft), bounds)
        if reasons:
            held.documents.append((draft, "quarantined: " + "; ".join(reasons), reasons))
        else:
            kept_documents.append(draft)
    changes.documents = kept_documents
    kept_directives = []
    for draft in changes.directives:
        reasons = screen(directive_texts(draft), bounds)
        if reasons:
            held.directives.append((draft, "quarantined: " + "; ".join(reasons), reasons))
        elif require_approval:
            held.directives.append((draft, APPROVAL_REQUIRED, []))
        elif draft.priority == "critical":
            held.directives.append((draft, CRITICAL_WAITS, []))
            kept_directives.append(draft.model_copy(update={"priority": "normal"}))
        else:
            kept_directives.append(draft)
    changes.directives = kept_directives
    return held


def held_line(review_id: str, kind: str, text: str, why: str) -> str:
    """How a held item is named in the run record, the log and the UI (its escapes shown, never sent to a terminal)."""
    return view(f"{review_id}: {kind} '{' '.join(text.split())[:120]}' {why}")[:300]


__all__ = ["Held", "hold_back", "held_line", "project_bounds"]
