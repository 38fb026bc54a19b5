"""Commands: ``a0org knowledge list|show|review|preview`` and ``a0org directives``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from org.contracts.vocabulary import CATEGORIES

if TYPE_CHECKING:
    from org.contracts.knowledge import ReviewItem


def _config():
    """The supervisors' config (``supervisors.yaml``), or None."""
    try:
        from org.llm.config import load_config
    except ImportError:  # the model client is not part of this install
        return None
    return load_config()


def _store(args: argparse.Namespace):
    """The store at ``--root``, else the project's (``--project``), else the global one (``knowledge.root`` or the default)."""
    from org.kernel.paths import organizations_dir

    from . import locations
    from .store import KnowledgeStore

    if getattr(args, "root", None):
        return KnowledgeStore(Path(args.root))
    config = _config()
    configured = config.knowledge.root if config else None
    return KnowledgeStore(locations.knowledge_root(organizations_dir(), getattr(args, "project", None), configured),
                          directives=_queue_path(args, None))


def _queue_path(args: argparse.Namespace, explicit: str | None) -> Path | None:
    """The directive queue: given, else the one beside ``--root``'s store, else the project's (or the global) one."""
    from org.kernel.paths import organizations_dir

    from . import locations

    if explicit:
        return Path(explicit)
    if getattr(args, "root", None):
        return locations.directives_beside(Path(args.root))
    return locations.directives_path(organizations_dir(), getattr(args, "project", None))


def _list(args: argparse.Namespace) -> int:
    from org.kernel.paths import organizations_dir

    from . import locations

    store = _store(args)
    documents = store.documents(args.category)
    for document in documents:
        who = "hand-written" if document.hand_written else f"by {document.meta.last_updated_by}"
        print(f"{document.path:<44} {document.status:<12} {who:<24} {document.title}")
    scope = "" if args.root else f" ({locations.describe(args.project)})"
    print(f"{len(documents)} document(s) in {store.root}{scope}")
    others = [p for p in locations.projects_with_stores(organizations_dir()) if p != args.project]
    if not args.root and others:
        print(f"projects with a store of their own: {', '.join(others)} (see one with --project NAME)")
    return 0


def _find(store, name: str):
    """A document by path, path without .md, or bare name when only one folder has it."""
    name = name.strip().removesuffix(".md")
    if "/" in name:
        return store.get(name + ".md")
    matches = [d for d in store.documents() if d.name == name]
    return matches[0] if len(matches) == 1 else None


def _show(args: argparse.Namespace) -> int:
    store = _store(args)
    document = _find(store, args.document)
    if document is None:
        print(f"no single document {args.document!r} in {store.root} (try `a0org knowledge list`)", file=sys.stderr)
        return 1
    print((store.root / document.path).read_text(encoding="utf-8"), end="")
    return 0


def _describe(item: ReviewItem) -> list[str]:
    from .screening import view  # (the command line loads what a command uses, when it runs)

    when = f"{item.created_at:%Y-%m-%d %H:%M}"
    task = f", after task {item.task}" if item.task is not None else ""
    held = [f"    QUARANTINED: {why}" for why in item.quarantined]
    if item.directive is not None:
        d = item.directive
        lines = [f"{item.id}  {item.status:<8} from {item.source}{task}, {when}: queue a {d.priority} {d.type} directive "
                 "(approve: queued as it is, reject: dropped)", *held]
        if item.reason and not item.quarantined:
            lines.append(f"    reason: {item.reason}")
        lines.append(f"    directive: {d.description}")
        lines += [f"    why: {d.rationale}"] if d.rationale else []
        lines += [f"    files: {', '.join(d.files)}"] if d.files else []
        return [view(line) for line in lines]
    if item.draft is None:
        head = f"{item.id}  {item.status:<8} from {item.source}{task}, {when}: confirm {item.document} (approve: established, reject: deprecated)"
        return [head] + ([f"    reason: {item.reason}"] if item.reason else [])
    draft = item.draft
    target = f"{draft.category}/{draft.name}.md"
    what = "replace the hand-written" if item.replaces_hand_written else "write"
    lines = [
        f"{item.id}  {item.status:<8} from {item.source}{task}, {when}: {what} {target} (approve: written as established, reject: dropped)",
        *held,
    ]
    if item.reason and not item.quarantined:
        lines.append(f"    reason: {item.reason}")
    lines.append(f"    title: {draft.title}")
    lines += [f"    {number}. {rule}" for number, rule in enumerate(draft.rules, 1)]
    for label, text in (("examples", draft.examples), ("rationale", draft.rationale)):
        if text.strip():
            lines.append(f"    {label}: " + "\n      ".join(text.strip().splitlines()))
    return [view(line) for line in lines]


def _review(args: argparse.Namespace) -> int:
    from .store import ReviewError

    store = _store(args)
    decision = args.approve or args.reject
    if decision:
        try:
            item = store.approve(decision) if args.approve else store.reject(decision)
        except ReviewError as exc:
            print(str(exc), file=sys.stderr)
            return 1
        print(f"{item.id} {item.status}")
        return 0
    items = store.review_items(include_decided=args.all)
    for item in items:
        print("\n".join(_describe(item)))
    pending = sum(1 for item in items if item.status == "pending")
    print(f"{pending} item(s) awaiting review in {store.root}" + ("; approve or reject with --approve ID / --reject ID" if pending else ""))
    return 0


def _preview(args: argparse.Namespace) -> int:
    """Both sections in the order the agent's prompt has them: knowledge, then directives (nearest the model's answer)."""
    from .directives import DirectiveQueue
    from .selection import prompt_sections, select_documents

    config = _config()
    budget = args.budget or (config.knowledge.injection_token_budget if config else 2000)
    lessons = config.knowledge.recent_lessons if config else 5
    store = _store(args)
    queue = DirectiveQueue(_queue_path(args, args.directives), config.directives if config else None)
    total = config.prompt_token_budget if config and not args.budget else None  # --budget: the knowledge section's alone
    knowledge, directives = prompt_sections(store, queue, args.domain, args.plan, knowledge_budget=budget, total_budget=total,
                                            recent_lessons=lessons)
    shown = [part for part in (knowledge, directives) if part]
    print("\n\n".join(shown) if shown else "(nothing: no pending directives and no documents to show)")
    left_out = [d.path for d in select_documents(store.documents(), args.domain, args.plan, lessons) if d.path not in knowledge]
    if left_out:
        print(f"\n({len(left_out)} document(s) left out to fit the {budget}-token budget: {', '.join(left_out)})", file=sys.stderr)
    return 0


def _directives(args: argparse.Namespace) -> int:
    from .directives import DirectiveQueue

    queue = DirectiveQueue(_queue_path(args, args.path))
    if args.done:
        removed = queue.mark_addressed(args.done, by="human")
        print(f"addressed: {', '.join(removed) if removed else 'none of those were pending'}")
        return 0 if removed else 1
    if args.history:
        for record in queue.history():
            print(f"{record.id:<6} {record.outcome:<9} by {record.by:<12} task {record.task:<5} {record.description}")
        return 0
    pending = queue.pending()
    for d in pending:
        print(f"{d.id:<6} {d.priority:<8} {d.type:<10} {d.source:<12} age {d.age:<3} {d.description}")
    print(f"{len(pending)} pending directive(s) in {queue.path}")
    return 0


def add_commands(sub) -> None:
    """Register ``knowledge`` (list, show, review, preview) and ``directives``."""
    root = argparse.ArgumentParser(add_help=False)
    where = root.add_mutually_exclusive_group()
    where.add_argument("--root", help="the knowledge store's folder (default: knowledge.root of supervisors.yaml, else <organizations>/knowledge)")
    where.add_argument("--project", metavar="NAME", help="the store of an Agent-Zero project (<organizations>/projects/NAME/knowledge)")

    p = sub.add_parser("knowledge", help="the knowledge store the supervisors write: list, show, review, preview")
    ks = p.add_subparsers(dest="knowledge_command", required=True)

    k = ks.add_parser("list", parents=[root], help="every document with its status and author")
    k.add_argument("--category", choices=CATEGORIES)
    k.set_defaults(func=_list)

    k = ks.add_parser("show", parents=[root], help="print one document (conventions/error_handling, or just error_handling)")
    k.add_argument("document")
    k.set_defaults(func=_show)

    k = ks.add_parser("review", parents=[root], help="items flagged for a person; approve or reject one")
    choice = k.add_mutually_exclusive_group()
    choice.add_argument("--approve", metavar="ID", help="approve R<n>: write the held-back document, or establish the flagged one")
    choice.add_argument("--reject", metavar="ID", help="reject R<n>: drop the held-back document, or deprecate the flagged one")
    k.add_argument("--all", action="store_true", help="also list items already decided")
    k.set_defaults(func=_review)

    k = ks.add_parser("preview", parents=[root], help="print the knowledge and directives sections the agent would see, in its order")
    k.add_argument("--domain", help="the agent's current domain")
    k.add_argument("--plan", help="the plan or request text that design and domain documents are matched against")
    k.add_argument("--budget", type=int, help="token budget of the knowledge section (default: supervisors.yaml, else 2000)")
    k.add_argument("--directives", help="directive queue file (default: the one beside the store: <store>/../supervisors/directives.json)")
    k.set_defaults(func=_preview)

    p = sub.add_parser("directives", help="pending supervisor directives, in the order the agent gets them")
    p.add_argument("--path", help="directive queue file (default: <organizations>/supervisors/directives.json)")
    p.add_argument("--project", metavar="NAME", help="the queue of an Agent-Zero project (<organizations>/projects/NAME/supervisors/directives.json)")
    p.add_argument("--done", nargs="+", metavar="ID", help="mark directives as addressed (e.g. D12)")
    p.add_argument("--history", action="store_true", help="directives that left the queue: addressed, aged out, capped")
    p.set_defaults(func=_directives)
