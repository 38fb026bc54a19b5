"""The knowledge store: markdown documents under one root, written by the supervisors.

Layout (the design's)::

    <root>/
      conventions/   code style supervisor: naming, formatting, error handling, file structure
      design/        design supervisor: architecture, data model, integration, boundaries
      lessons/       internaliser: what worked and what did not
      domain/        internaliser: facts about the problem domain
      _index.md      what is in the store; rewritten after every change
      _review/       items flagged for a person (R<n>.json); decided ones in _review/done/

Each supervisor writes only its own folders; a person's documents are read and never
overwritten; secrets are redacted from every file written here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from org.contracts.knowledge import (
    CATEGORIES,
    HUMAN,
    OWNERSHIP,
    DirectiveDraft,
    KnowledgeDocument,
    KnowledgeDraft,
    ReviewItem,
)
from org.kernel.bounded import drop_oldest
from org.kernel.files import atomic_write_text, exclusive
from org.kernel.loading import DocumentError
from org.kernel.log import logger, warn_once
from org.kernel.paths import UnsafePathError, organizations_dir, safe_child
from org.kernel.redact import redact

from .directives import DirectiveQueue
from .documents import (
    Document,
    change_entry,
    load_json,
    log_refusal,
    parse_document,
    redact_draft,
    render_document,
    restamp,
    same_content,
    utc_now,
)
from .locations import directives_beside

#: Clean tasks after which a provisional document becomes established.
ESTABLISH_AFTER_TASKS = 5
INDEX = "_index.md"
#: Parsed documents by file, shared by every store object: the prompt section is built
#: often, and a document is parsed again only when its text changes.
_PARSED: dict[str, tuple[tuple[str, datetime], Document]] = {}
_PARSED_LIMIT = 4096
_PARSED_LOCK = threading.Lock()  # the agent's thread and the supervisors' thread both read documents
REVIEW_DIR = "_review"


def default_root() -> Path:
    """``<organizations>/knowledge``."""
    return organizations_dir() / "knowledge"


class OwnershipError(PermissionError):
    """A writer outside its folders: another supervisor's, or not a supervisor at all."""


class ReviewError(LookupError):
    """No such pending review item, or it cannot be applied any more."""


@dataclass(frozen=True)
class WriteOutcome:
    """What :meth:`KnowledgeStore.write` did with a draft."""

    path: str  #: ``<category>/<name>.md``
    action: Literal["created", "updated", "unchanged", "queued_for_review"]
    review_id: str | None = None  #: set when the draft went to the review queue


def check_owner(by: str, category: str) -> None:
    """Raise :class:`OwnershipError` (after one log line) unless ``by`` owns ``category``."""
    owned = OWNERSHIP.get(by)
    if owned is None or category not in owned:
        mine = ", ".join(f"{c}/" for c in owned) if owned else "nothing (not a supervisor)"
        message = f"{by} may not write {category}/ (it owns {mine}); refused"
        log_refusal(message)
        raise OwnershipError(message)


class KnowledgeStore:
    """Documents under ``root``; see the module docstring for the layout."""

    def __init__(self, root: Path | str, *, establish_after_tasks: int = ESTABLISH_AFTER_TASKS,
                 directives: Path | str | None = None):
        self.root = Path(root)
        self.establish_after_tasks = max(1, int(establish_after_tasks))
        #: The queue an approved directive goes to (default: the one beside the store).
        self.directives_path = Path(directives) if directives is not None else directives_beside(self.root)

    # -- reading -------------------------------------------------------------------------

    @property
    def index_path(self) -> Path:
        return self.root / INDEX

    @property
    def review_dir(self) -> Path:
        return self.root / REVIEW_DIR

    def _lock(self):
        return exclusive(self.root / ".lock")

    def _read(self, path: Path, relpath: str) -> Document | None:
        try:
            text = path.read_text(encoding="utf-8")
            modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except (OSError, UnicodeDecodeError) as exc:
            warn_once(f"{path}: cannot read: {exc}", key=f"knowledge:{path}:read")
            return None
        key = str(path.absolute())
        with _PARSED_LOCK:
            cached = _PARSED.get(key)
        if cached and cached[0] == (text, modified):  # the text itself: a rewrite can keep size and time
            return cached[1]
        document = parse_document(relpath, text, modified, file_label=str(path))
        with _PARSED_LOCK:
            _PARSED[key] = ((text, modified), document)
            drop_oldest(_PARSED, _PARSED_LIMIT)
        return document

    def documents(self, category: str | None = None) -> list[Document]:
        """Every document (the pack's and a person's) in one folder or all, by path."""
        out: list[Document] = []
        for folder in (category,) if category else CATEGORIES:
            directory = self.root / folder
            if folder not in CATEGORIES or not directory.is_dir():
                continue
            for path in sorted(directory.glob("*.md")):
                if path.name.startswith((".", "_")) or not path.is_file():
                    continue
                document = self._read(path, f"{folder}/{path.name}")
                if document is not None:
                    out.append(document)
        return out

    def _path(self, relpath: str) -> Path | None:
        """The file of ``<category>/<name>.md`` (None for anything else, such as ``../`` in it)."""
        category, _, name = relpath.partition("/")
        if category not in CATEGORIES or not name.endswith(".md"):
            return None
        try:
            return safe_child(self.root, category, name)
        except UnsafePathError:
            return None

    def get(self, relpath: str) -> Document | None:
        """The document at ``<category>/<name>.md``, or None."""
        path = self._path(relpath)
        return self._read(path, relpath) if path is not None and path.is_file() else None

    def _persons(self, relpath: str, existing: Document | None) -> bool:
        """A person's text is at ``relpath``: their document, or a file that cannot be read as one
        (not UTF-8, unreadable, a dangling link), which no supervisor may replace either."""
        if existing is not None:
            return existing.hand_written
        path = self._path(relpath)
        return path is not None and (path.is_symlink() or path.exists())

    def is_empty(self) -> bool:
        """No documents at all: the supervisors bootstrap (establish baselines)."""
        return not self.documents()

    # -- writing -------------------------------------------------------------------------

    def write(self, doc: KnowledgeDraft, by: str, *, task: int | None = None) -> WriteOutcome:
        """Write one document for supervisor ``by`` (provisional until established).

        Raises :class:`OwnershipError` outside ``by``'s folders. A draft aimed at a
        person's document is not written: it goes to the review queue instead. Writing
        what is already there changes nothing (``unchanged``).
        """
        check_owner(by, doc.category)
        draft = redact_draft(doc)
        relpath = f"{draft.category}/{draft.name}.md"
        with self._lock():
            existing = self.get(relpath)
            if self._persons(relpath, existing):
                item = self._queue(draft, by, "proposed change to a hand-written document", task, replaces_hand_written=True)
                log_refusal(f"{relpath} is a person's document; {by}'s change went to the review queue as {item.id}")
                return WriteOutcome(relpath, "queued_for_review", item.id)
            if existing is not None and same_content(existing, draft):
                return WriteOutcome(relpath, "unchanged")
            action = self._apply(draft, relpath, existing, by=by, author=by, status=draft.status, task=task,
                                 what=draft.change or ("created" if existing is None else "updated"))
            self.rebuild_index()
            return WriteOutcome(relpath, action)

    def _apply(self, draft: KnowledgeDraft, relpath: str, existing: Document | None, *, by: str, author: str,
               status: str, task: int | None, what: str) -> Literal["created", "updated"]:
        """Write ``draft`` to ``relpath`` in full (caller holds the lock)."""
        now = utc_now()
        previous = existing.meta if existing is not None else None
        meta = KnowledgeDocument(
            title=" ".join(draft.title.split()),
            category=draft.category,
            status=status,  # a rewrite is unconfirmed again, whatever its status was
            author=previous.author if previous is not None and author != HUMAN else author,
            last_updated_by=by,
            updated_after_task=task,
            created_at=previous.created_at if previous is not None else now,
            updated_at=now,
            clean_tasks=0,
            domains=list(draft.domains),
            tags=list(draft.tags),
        )
        history = existing.change_log if existing is not None and previous is not None else []
        text = render_document(meta, draft, [*history, change_entry(now, by, task, what)])
        atomic_write_text(safe_child(self.root, draft.category, f"{draft.name}.md"), text)
        return "created" if existing is None else "updated"

    def _restamp(self, document: Document, entry_text: str | None, by: str, **changes) -> None:
        """Change front matter fields of a pack document, keeping its text (lock held)."""
        assert document.meta is not None
        meta = document.meta.model_copy(update=changes)
        path = safe_child(self.root, *document.path.split("/"))
        entry = change_entry(utc_now(), by, None, entry_text) if entry_text else None
        atomic_write_text(path, restamp(path.read_text(encoding="utf-8"), meta, entry))

    def note_task_completed(self, problems: bool, used: set[str] | None = None) -> list[str]:
        """Count one finished task for every provisional document the pack wrote.

        A task without problems counts towards establishing them; a task with problems
        starts the count again. With ``used`` (paths of the documents the task's prompt
        showed), only those count: a document is established by tasks that used it.
        Returns the paths that became established.
        """
        promoted: list[str] = []
        with self._lock():
            for document in self.documents():
                meta = document.meta
                if meta is None or meta.status != "provisional" or used is not None and document.path not in used:
                    continue
                if problems:
                    if meta.clean_tasks:
                        self._restamp(document, None, "store", clean_tasks=0)
                    continue
                clean = meta.clean_tasks + 1
                if clean >= self.establish_after_tasks:
                    self._restamp(document, f"established after {clean} tasks without problems", "store",
                                  clean_tasks=clean, status="established")
                    promoted.append(document.path)
                else:
                    self._restamp(document, None, "store", clean_tasks=clean)
            if promoted:
                logger.info("knowledge: established %s", ", ".join(promoted))
                self.rebuild_index()
        return promoted

    # -- review queue ----------------------------------------------------------------------

    def queue_for_review(self, item: KnowledgeDraft | str, by: str, reason: str = "", task: int | None = None,
                         quarantined: list[str] = ()) -> ReviewItem:
        """Flag ``item`` for a person: a draft held back until approved, or the path
        (``<category>/<name>.md``) of a document of ``by``'s to confirm or deprecate.

        An item already pending for the same thing is returned instead of a new one.
        """
        if isinstance(item, KnowledgeDraft):
            check_owner(by, item.category)
            draft = redact_draft(item)
            with self._lock():
                relpath = f"{draft.category}/{draft.name}.md"
                replaces = self._persons(relpath, self.get(relpath))
                return self._queue(draft, by, reason, task, replaces_hand_written=replaces, quarantined=list(quarantined))
        category = item.partition("/")[0]
        check_owner(by, category)
        with self._lock():
            document = self.get(item)
            if document is None or document.hand_written:
                why = "no such document" if document is None else "a person's document"
                message = f"{item}: {why}; not queued for review"
                log_refusal(message)
                raise ReviewError(message)
            return self._queue(None, by, reason, task, document=item)

    def hold_directive(self, directive: DirectiveDraft, by: str, reason: str, quarantined: list[str] = (),
                       task: int | None = None) -> ReviewItem:
        """Keep a directive from the agent until a person accepts it (approve queues it as it is, critical included)."""
        held = directive.model_copy(update={
            "description": redact(directive.description)[:300], "rationale": redact(directive.rationale)[:300],
            "files": [redact(f)[:300] for f in directive.files]})
        with self._lock():
            return self._queue(None, by, reason, task, directive=held, quarantined=list(quarantined))

    def _queue(self, draft: KnowledgeDraft | None, by: str, reason: str, task: int | None, *,
               document: str | None = None, replaces_hand_written: bool = False, directive: DirectiveDraft | None = None,
               quarantined: list[str] = ()) -> ReviewItem:
        """Add a review item unless the same one is pending (lock held)."""
        for pending in self.review_items():
            if pending.source == by and (pending.draft, pending.document, pending.directive) == (draft, document, directive):
                return pending
        item = ReviewItem(id=f"R{self._next_review_number()}", source=by, reason=redact(reason)[:500], task=task,
                          created_at=utc_now(), draft=draft, document=document, replaces_hand_written=replaces_hand_written,
                          directive=directive, quarantined=[redact(q)[:200] for q in quarantined][:20])
        self._save_review(item, self.review_dir / f"{item.id}.json")
        self.rebuild_index()
        return item

    def _save_review(self, item: ReviewItem, path: Path) -> None:
        atomic_write_text(path, item.model_dump_json(indent=2) + "\n")  # fields redacted on the way in

    def _review_files(self, decided: bool) -> Iterable[Path]:
        folder = self.review_dir / "done" if decided else self.review_dir
        return sorted(folder.glob("R*.json"), key=lambda p: (len(p.stem), p.stem)) if folder.is_dir() else []

    def _next_review_number(self) -> int:
        numbers = [int(p.stem[1:]) for decided in (False, True) for p in self._review_files(decided) if p.stem[1:].isdigit()]
        return max(numbers, default=0) + 1

    def review_items(self, include_decided: bool = False) -> list[ReviewItem]:
        """Pending review items, oldest first (and decided ones after them, if asked)."""
        items = []
        for decided in (False, True) if include_decided else (False,):
            for path in self._review_files(decided):
                try:
                    items.append(load_json(ReviewItem, path))
                except DocumentError as exc:  # a broken file is named once and skipped
                    for problem in exc.problems:
                        warn_once(f"{problem} (review item skipped)", key=f"knowledge:{path}:{problem.field}")
        return items

    def _pending(self, review_id: str) -> ReviewItem:
        review_id = review_id.strip().upper()
        for item in self.review_items():
            if item.id == review_id:
                return item
        raise ReviewError(f"no pending review item {review_id}")

    def approve(self, review_id: str, by: str = HUMAN) -> ReviewItem:
        """A person confirms: a held-back draft is written as established, a held-back directive is
        queued; a flagged document becomes established. Returns the decided item."""
        with self._lock():
            item = self._pending(review_id)
            what = f"approved by {by} ({item.id})" + (f": {item.draft.change}" if item.draft and item.draft.change else "")
            if item.directive is not None:
                queued = DirectiveQueue(self.directives_path).add([item.directive])
                logger.info("knowledge: %s accepted by %s; queued as %s", item.id, by, ", ".join(d.id for d in queued) or "a pending twin")
            elif item.draft is not None:
                relpath = f"{item.draft.category}/{item.draft.name}.md"
                existing = self.get(relpath)
                if self._persons(relpath, existing):
                    kept = self._keep_replaced(item, relpath)
                    self._apply(item.draft, relpath, None, by=item.source, author=HUMAN, status="established", task=item.task,
                                what=f"{what}; replaced a hand-written document (kept as {kept})")
                else:
                    self._apply(item.draft, relpath, existing, by=item.source, author=item.source, status="established", task=item.task, what=what)
            else:
                self._restamp(self._flagged(item), what, by, status="established")
            return self._decide(item, "approved", by)

    def reject(self, review_id: str, by: str = HUMAN) -> ReviewItem:
        """A person declines: a held-back draft or directive is dropped; a flagged document is
        deprecated. Returns the decided item."""
        with self._lock():
            item = self._pending(review_id)
            if item.document is not None:
                self._restamp(self._flagged(item), f"deprecated by {by} ({item.id})", by, status="deprecated")
            return self._decide(item, "rejected", by)

    def _flagged(self, item: ReviewItem) -> Document:
        document = self.get(item.document or "")
        if document is None or document.meta is None:
            raise ReviewError(f"{item.id}: {item.document} is gone or no longer the pack's; reject the item")
        return document

    def _keep_replaced(self, item: ReviewItem, relpath: str) -> str:
        """A person's text is never lost: kept, byte for byte, beside the review item it gave way to."""
        source = safe_child(self.root, *relpath.split("/"))
        kept = f"{REVIEW_DIR}/replaced/{item.id}-{relpath.replace('/', '-')}"
        try:
            data = source.read_bytes()
            (self.root / kept).parent.mkdir(parents=True, exist_ok=True)
            (self.root / kept).write_bytes(data)
        except OSError as exc:
            raise ReviewError(f"{item.id}: {relpath} cannot be kept before it is replaced ({exc.strerror or exc}); "
                              "move it away or reject the item") from None
        return kept

    def _decide(self, item: ReviewItem, status: Literal["approved", "rejected"], by: str) -> ReviewItem:
        decided = item.model_copy(update={"status": status, "decided_at": utc_now(), "decided_by": by})
        self._save_review(decided, self.review_dir / "done" / f"{item.id}.json")
        try:
            os.unlink(self.review_dir / f"{item.id}.json")
        except FileNotFoundError:
            pass
        logger.info("knowledge: review item %s %s by %s", item.id, status, by)
        self.rebuild_index()
        return decided

    # -- index -----------------------------------------------------------------------------

    def render_index(self) -> str:
        """``_index.md``: every document by folder, with status, author and date."""
        documents = self.documents()
        pending = len(self.review_items())
        lines = [
            "# Knowledge index",
            "",
            "_Written by a0-org-kernel after every change to the store; edits here are overwritten._",
            "",
            f"{len(documents)} document(s); {pending} item(s) awaiting review (`a0org knowledge review`).",
        ]
        for category in CATEGORIES:
            lines += ["", f"## {category.capitalize()}", ""]
            entries = [d for d in documents if d.category == category]
            lines += [_index_line(d) for d in entries] or ["_(none)_"]
        return redact("\n".join(lines) + "\n")

    def rebuild_index(self) -> Path:
        """Rewrite ``_index.md`` from the documents on disk."""
        with self._lock():
            text = self.render_index()
            if not self.index_path.is_file() or self.index_path.read_text(encoding="utf-8") != text:
                atomic_write_text(self.index_path, text)
        return self.index_path


def _index_line(document: Document) -> str:
    who = "hand-written" if document.hand_written else f"by {document.meta.last_updated_by}"  # type: ignore[union-attr]
    keywords = sorted(set(document.domains) | set(document.tags))
    extra = f"; {', '.join(keywords)}" if keywords else ""
    title = " ".join(document.title.replace("[", "(").replace("]", ")").split())
    return f"- [{title}]({document.path}): {document.status}, {who}, {document.updated_at:%Y-%m-%d}{extra}"


__all__ = [
    "ESTABLISH_AFTER_TASKS",
    "KnowledgeStore",
    "OwnershipError",
    "ReviewError",
    "WriteOutcome",
    "check_owner",
    "default_root",
]
