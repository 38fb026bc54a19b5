"""Everything the supervisors add to a prompt stays within one number (``prompt_token_budget``),
and ``## ACTIVE DIRECTIVES`` within its own budget, with every field at the schema's maximum."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from org.contracts.knowledge import DirectiveDraft, KnowledgeDocument, KnowledgeDraft
from org.contracts.supervisors import DirectiveSettings
from org.knowledge.directives import DirectiveQueue
from org.knowledge.documents import render_document, utc_now
from org.knowledge.selection import SEPARATOR, prompt_sections
from org.knowledge.store import KnowledgeStore
from org.knowledge.tokens import estimate_tokens

OWNERS = {"conventions": "code_style", "design": "design", "lessons": "internaliser", "domain": "internaliser"}


def fill(text: str, length: int) -> str:
    return (text * (length // max(1, len(text)) + 1))[:length]


def at_maxima(root: Path, text: str) -> tuple[KnowledgeStore, DirectiveQueue]:
    """A store with six documents per folder and a queue full to every cap, every field at its longest."""
    store = KnowledgeStore(root / "knowledge")
    now = utc_now()
    for category, owner in OWNERS.items():
        (store.root / category).mkdir(parents=True)
        for n in range(6):  # written as the store writes them, without its index after each one
            draft = KnowledgeDraft(category=category, name=f"{category}-{n}", title=fill(text, 200), rules=[fill(text, 500)] * 30,
                                   examples=fill(text, 4000), rationale=fill(text, 2000), domains=["shop"],
                                   tags=[f"t{i}" for i in range(20)])
            meta = KnowledgeDocument(title=" ".join(draft.title.split()) or "t", category=category, author=owner, last_updated_by=owner,
                                     created_at=now, updated_at=now, domains=draft.domains, tags=draft.tags)
            (store.root / category / f"{draft.name}.md").write_text(render_document(meta, draft, ["created"]), encoding="utf-8")
    limits = DirectiveSettings()
    queue = DirectiveQueue(root / "supervisors" / "directives.json", limits)
    for kind, priority, count in (("functional", "critical", limits.critical_cap), ("functional", "normal", limits.functional_cap),
                                  ("cleanup", "low", limits.cleanup_cap)):
        queue.add([DirectiveDraft(type=kind, priority=priority, source="design", description=f"{priority} {n} " + fill(text, 280),
                                  rationale=fill(text, 300), files=[fill(text, 300)] * 30) for n in range(count)])
    return store, queue


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40).filter(lambda t: t.strip())


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, knowledge_budget=st.integers(100, 50_000), directive_budget=st.integers(100, 20_000),
       total=st.integers(200, 60_000))
def test_both_sections_stay_within_the_one_budget_at_the_schemas_maxima(text, knowledge_budget, directive_budget, total):
    with tempfile.TemporaryDirectory() as folder:
        store, queue = at_maxima(Path(folder), text)
        queue.settings = queue.settings.model_copy(update={"injection_token_budget": directive_budget})
        knowledge, directives = prompt_sections(store, queue, "shop", "t1 t2 shop", knowledge_budget=knowledge_budget,
                                                total_budget=total)
    assert estimate_tokens(directives) <= min(directive_budget, total)
    assert estimate_tokens(knowledge) <= knowledge_budget
    both = SEPARATOR.join(part for part in (knowledge, directives) if part)
    assert estimate_tokens(both) <= total


def test_at_the_defaults_the_sections_take_at_most_3000_tokens_and_say_what_waits(tmp_path):
    store, queue = at_maxima(tmp_path, "Use ToolError in app/tools.py; see the loader. ")
    assert len(queue.pending()) == 23  # 3 critical, 10 functional, 10 cleanup: the caps
    knowledge, directives = prompt_sections(store, queue, "shop", "t1", knowledge_budget=2000, total_budget=3000)
    assert estimate_tokens(directives) <= 800 and estimate_tokens(knowledge) + estimate_tokens(directives) + 1 <= 3000
    assert directives.startswith("## ACTIVE DIRECTIVES") and "[critical functional, from design]" in directives
    assert directives.rstrip().endswith("more wait until these are done.)")
    assert knowledge.startswith("## PROJECT KNOWLEDGE") and "cut to fit" in knowledge
