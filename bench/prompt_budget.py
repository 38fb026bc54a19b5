"""What the supervisors add to a prompt with every field at the schema's maximum.

    python bench/prompt_budget.py [--repo PATH]

Fills a knowledge store (six documents per folder) and a directive queue (25 directives: 3
critical, 12 functional, 10 cleanup) with every field at its longest, then prints the size of
``## PROJECT KNOWLEDGE`` and ``## ACTIVE DIRECTIVES`` as the agent gets them, in characters and
in the pack's token estimate, as one JSON line. ``--repo`` measures another checkout of the pack
(an older one, for a before/after figure).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args()
    sys.path.insert(0, args.repo)
    from org.contracts.knowledge import KnowledgeDraft
    from org.knowledge import (
        DirectiveQueue,
        KnowledgeStore,
        estimate_tokens,
        project_knowledge_section,
    )

    text = "Use ToolError in app/tools.py; see the loader. "
    fill = lambda length: (text * (length // len(text) + 1))[:length]  # noqa: E731
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        store = KnowledgeStore(root / "knowledge")
        for category, owner in {"conventions": "code_style", "design": "design", "lessons": "internaliser", "domain": "internaliser"}.items():
            for n in range(6):
                store.write(KnowledgeDraft(category=category, name=f"{category}-{n}", title=fill(200), rules=[fill(500)] * 30,
                                           examples=fill(4000), rationale=fill(2000), domains=["shop"],
                                           tags=[f"t{i}" for i in range(20)]), owner)
        queue = DirectiveQueue(root / "supervisors" / "directives.json")
        for kind, priority, count in (("functional", "critical", 3), ("functional", "normal", 12), ("cleanup", "low", 10)):
            queue.add([{"type": kind, "priority": priority, "source": "design", "description": f"{priority} {n} " + fill(280),
                        "rationale": fill(300), "files": [fill(300)] * 30} for n in range(count)])
        try:
            from org.knowledge.selection import prompt_sections
            knowledge, directives = prompt_sections(store, queue, "shop", "t1", knowledge_budget=2000, total_budget=3000)
        except ImportError:  # a checkout from before the one budget
            knowledge = project_knowledge_section(store, "shop", "t1", 2000)
            directives = queue.active_directives_section()
        print(json.dumps({
            "name": "prompt_sections_at_schema_maxima", "repo": args.repo, "pending_directives": len(queue.pending()),
            "directives_chars": len(directives), "directives_tokens": estimate_tokens(directives),
            "knowledge_chars": len(knowledge), "knowledge_tokens": estimate_tokens(knowledge),
            "total_tokens": estimate_tokens(knowledge + "\n\n" + directives),
        }))


if __name__ == "__main__":
    main()
