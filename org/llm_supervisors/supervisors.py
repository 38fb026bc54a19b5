"""The three supervisors: what each reads, what it is asked, and what its answer changes.

* **Code style** reads the recent tasks, the files they touched and ``conventions/``;
  writes convention documents and cleanup directives.
* **Design** reads the recent tasks, the files they touched and ``design/``; writes
  design documents and functional directives (approach changes).
* **Internaliser** reads the recent tasks; writes ``lessons/`` and ``domain/``, and
  flags items a person should confirm to the review queue. It never prescribes.

A supervisor whose part of the store is empty runs in *bootstrap mode*: it is asked to
establish baselines from what the code already does, and cleanup directives it returns
anyway are dropped (there is nothing yet to deviate from).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from org.contracts.knowledge import OWNERSHIP, DirectiveDraft, KnowledgeDraft
from org.contracts.supervisor_outputs import CodeStyleOutput, DesignOutput, InternaliserOutput, KnowledgeItem, TaskDigest, ToolCall
from org.kernel.credentials import is_credential_file, is_credential_text
from org.kernel.redact import redact
from org.knowledge.documents import Document
from org.lazy_patterns import lazy_pattern

from .codebase import CodeBase
from .records import LABELS

#: Characters of prompt per section: at most about 8k tokens of input in all (the design budgets
#: about 5k; most runs send less, since few sections are full).
DIGEST_CHARS = 7000
OWN_DOCUMENT_CHARS = 5000
OTHER_DOCUMENT_CHARS = 1500
DIRECTIVE_CHARS = 1500
FINDINGS_CHARS = 3000
FILE_CHARS = 3000
FILES_CHARS = 9000
MAX_FILES = 6
#: Characters of the whole user message: with the system message and the schema, about 9,000 tokens
#: (a bootstrap run's code base sample gives way first).
PROMPT_CHARS = 30_000
#: Files named but not read, listed with the reason.
MAX_UNREAD = 10
#: Files larger than this are not read at all.
MAX_FILE_BYTES = 1_000_000
#: How many recent tasks a supervisor reads at least, and at most.
MIN_TASKS, MAX_TASKS = 3, 10
_RULE_LINE = lazy_pattern(r"^\s*\d+\.\s+(.*\S)\s*$")


@dataclass(frozen=True)
class SupervisorSpec:
    name: str
    schema: type[BaseModel]
    purpose: str
    behaviour: tuple[str, ...]
    bootstrap: str
    reads_files: bool
    writing: str  #: how its documents (and directives) are written

    @property
    def label(self) -> str:
        return LABELS[self.name]

    @property
    def categories(self) -> tuple[str, ...]:
        return OWNERSHIP[self.name]


#: How the code style and design supervisors write (the internaliser records facts, never rules).
RULES_WRITING = (
    "Documents are rules, not prose: 'Do X', not 'we tend to do X'; each addresses one concern, rules under 500 characters in all, "
    "with concrete good and bad examples. A document you write replaces the whole file: give all of its rules, examples and "
    "rationale, not only what changed. Directives are short (about 200 characters) and name the files they concern."
)

SPECS: dict[str, SupervisorSpec] = {
    "code_style": SupervisorSpec(
        name="code_style",
        schema=CodeStyleOutput,
        purpose="Review the code conventions across the agent's recent work, find inconsistencies, establish and enforce patterns "
                "(naming, formatting, error handling, file structure, testing).",
        behaviour=(
            "Read the recent tasks to see which files changed, then read those files and compare them with the convention documents.",
            "Where no convention exists yet for a pattern, establish one: a document in conventions/ with rules and good/bad examples.",
            "Where a convention exists but the code does not follow it, list the inconsistency and give a cleanup directive naming the files.",
            "Where conventions exist and the code follows them, change nothing.",
        ),
        bootstrap="BOOTSTRAP MODE: the store has no conventions yet. Establish baselines: write convention documents that describe "
                  "the patterns the code already follows. Do not report deviations and give no cleanup directives.",
        reads_files=True,
        writing=RULES_WRITING,
    ),
    "design": SupervisorSpec(
        name="design",
        schema=DesignOutput,
        purpose="Review the solution's design against what has been learned while building it; refine the design documents "
                "when experience contradicts them (architecture, data model, integration patterns, component boundaries).",
        behaviour=(
            "Compare the design documents with what was built (the recent tasks and the files they touched).",
            "List each place where the implementation diverges from the design.",
            "Decide for each whether the implementation or the design is wrong.",
            "If the design is outdated, update its document in design/.",
            "If the approach must change, give a functional directive with specific direction and its rationale; "
            "use priority critical only when continuing would do harm.",
        ),
        bootstrap="BOOTSTRAP MODE: the store has no design documents yet. Capture the architecture as it is now in design/ "
                  "documents. Do not report divergences and give no cleanup directives.",
        reads_files=True,
        writing=RULES_WRITING,
    ),
    "internaliser": SupervisorSpec(
        name="internaliser",
        schema=InternaliserOutput,
        purpose="Capture novel discoveries and decisions from the agent's recent work so they are not lost: lessons (what worked, "
                "what did not, surprising library behaviour) and domain knowledge. Record facts and observations; never prescribe patterns.",
        behaviour=(
            "Review the recent tasks: requests, tool calls, errors, results.",
            "Identify anything novel: a pattern discovered, an unexpected behaviour, a design decision made implicitly.",
            "Give each as one knowledge item (category lesson or domain, a short topic name for the document it belongs in).",
            "Set needs_user_review for items a person should confirm, such as significant decisions made implicitly.",
            "Leave out what the knowledge documents below already say.",
        ),
        bootstrap="BOOTSTRAP MODE: the store has no lessons or domain knowledge yet. Capture the initial domain knowledge "
                  "the recent tasks reveal.",
        reads_files=False,
        writing=("Knowledge items are facts and observations, not prescriptions: what happened or was found, as it is "
                 "('LangGraph state reducers silently drop None values'), with the task it came from and how sure you are. "
                 "Each item is one discovery in one or two sentences; items on the same topic are added to its document, "
                 "whose earlier items are kept."),
    ),
}


# --------------------------------------------------------------------------- what a run reads


@dataclass
class RunInput:
    """Everything one run's prompt is built from (bounded, redacted)."""

    digests: list[TaskDigest]
    own_documents: list[Document]
    other_documents: list[Document]
    directives: list[str]
    files: list[tuple[str, str | None]] = field(default_factory=list)  #: (name, text); text None: not read, name says why
    previous_findings: list[str] = field(default_factory=list)
    codebase: CodeBase | None = None  #: the bootstrap scan (code style and design, bootstrap runs only)

    @property
    def bootstrap(self) -> bool:
        return not self.own_documents


def split_documents(spec: SupervisorSpec, documents: list[Document]) -> tuple[list[Document], list[Document]]:
    own = [d for d in documents if d.category in spec.categories]
    return own, [d for d in documents if d.category not in spec.categories]


def read_touched_files(digests: list[TaskDigest], skip_under: tuple[Path, ...] = (),
                       never_read: tuple[str, ...] = ()) -> list[tuple[str, str | None]]:
    """The newest files the tasks named that can be read here, each cut short and redacted.

    A file that cannot be read is listed with None (and why, in :data:`NOT_READ`), so the
    supervisor is told instead of the file being skipped without a word.
    """
    names: dict[str, None] = {}
    for digest in reversed(digests):
        for name in digest.files_touched:
            names.setdefault(name, None)
    files: list[tuple[str, str | None]] = []
    total = read = 0
    for name in names:
        if read >= MAX_FILES or total >= FILES_CHARS:
            break
        text, why = _readable(Path(name), skip_under, never_read)
        if text is None:
            if why and len(files) - read < MAX_UNREAD:
                files.append((f"{name} ({why})", None))
            continue
        text = redact(text)[: min(FILE_CHARS, FILES_CHARS - total)]  # redacted before it is cut
        files.append((name, text))
        total += len(text)
        read += 1
    return files


def readable_file(path: Path, skip_under: tuple[Path, ...] = (), never_read: tuple[str, ...] = ()) -> str | None:
    """A file's text as a supervisor may see it (start only), or None when it is refused or unreadable."""
    return _readable(path, skip_under, never_read)[0]


def _readable(path: Path, skip_under: tuple[Path, ...], never_read: tuple[str, ...] = ()) -> tuple[str | None, str]:
    """The file's text, or None and why: credential files (by name, also after links are followed, or by content) are never read."""
    if is_credential_file(path, never_read):
        return None, "a credential file: never read"
    try:
        resolved = path.resolve()
        if any(base == resolved or base in resolved.parents for base in skip_under):
            return None, ""  # the pack's own files (the knowledge store, run records) are not code under review
        if is_credential_file(resolved, never_read):
            return None, "a credential file: never read"
        if not resolved.is_file():
            return None, "not found here"
        if resolved.stat().st_size > MAX_FILE_BYTES:
            return None, "too large"
        data = resolved.read_bytes()[: FILE_CHARS * 4]
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or type(exc).__name__}"
    if b"\x00" in data:
        return None, "binary"
    text = data.decode("utf-8", "replace")
    return (None, "a credential file: never read") if is_credential_text(text) else (text, "")


# --------------------------------------------------------------------------- the prompt


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 30)].rstrip() + "\n... (cut to fit)"


def _call_text(call: ToolCall) -> str:
    who = f"[subordinate A{call.agent}] " if call.agent else ""
    verdict = "ok" if call.ok else f"FAILED {call.error_type or ''}".rstrip()
    return f"{who}{call.tool}({call.args}) {verdict}" + (f" -> {call.output}" if call.output else "")


def digest_text(digest: TaskDigest) -> str:
    pace = "/".join(digest.pace_levels) or "-"
    lines = [f"### Task {digest.task} ({digest.outcome}{': ' + digest.abort_reason if digest.abort_reason else ''}; "
             f"{digest.turns} turns, {digest.duration_seconds:.0f} s, PACE {pace})"]
    if digest.user_message:
        lines.append(f"User: {digest.user_message}")
    if digest.workdir:
        lines.append(f"Working directory: {digest.workdir}")
    if digest.reasoning:
        lines.append("Reasoning: " + " | ".join(digest.reasoning))
    if digest.tools:
        lines.append("Tools:" + "".join(f"\n- {_call_text(c)}" for c in digest.tools))
        if digest.tool_calls > len(digest.tools):
            lines.append(f"(+{digest.tool_calls - len(digest.tools)} more calls)")
    if digest.files_touched:
        lines.append("Files: " + ", ".join(digest.files_touched))
    if digest.files_unresolved:
        lines.append("Files named relative to an unknown folder (not read): " + ", ".join(digest.files_unresolved))
    if digest.errors:
        lines.append("Errors: " + " | ".join(digest.errors))
    if digest.steering:
        lines.append(f"Radio-check steering received: {digest.steering}")
    if digest.final_response:
        lines.append(f"Response: {digest.final_response}")
    return "\n".join(lines)


def digests_section(digests: list[TaskDigest]) -> str:
    """Newest first, as many as fit."""
    blocks, used = [], 0
    for digest in reversed(digests):
        block = digest_text(digest)
        if used + len(block) > DIGEST_CHARS:
            if DIGEST_CHARS - used < 200:
                break  # (a cap below the note's length would keep the whole block)
            block = _cap(block, DIGEST_CHARS - used)
        blocks.append(block)
        used += len(block)
    return "\n\n".join(blocks) or "(no tasks recorded)"


def document_text(document: Document, full: bool) -> str:
    who = "written by a person: read-only, never rewrite it" if document.hand_written else f"by {document.author}"
    head = f"### {document.path}: {document.title} ({document.status}, {who})"
    return head + ("\n" + document.body.strip() if full else "")


def documents_section(documents: list[Document], full: bool, limit: int) -> str:
    return _cap("\n\n".join(document_text(d, full) for d in documents), limit) or "(none)"


def codebase_text(codebase: CodeBase, room: int) -> str:
    """The layout and as many whole sample files as fit in ``room`` characters (the layout cut last)."""
    layout = f"```\n{_cap(codebase.layout, max(1000, room // 3))}\n```"
    parts, used = [layout], len(layout)
    for name, text in codebase.files:
        block = f"### {name}\n```\n{text}\n```"
        if used + len(block) + 2 > room:
            parts.append(f"({len(codebase.files) - len(parts) + 1} more sampled file(s) left out to fit the prompt)")
            break
        parts.append(block)
        used += len(block) + 2
    return "\n\n".join(parts)


def build_messages(spec: SupervisorSpec, run: RunInput) -> list[dict[str, str]]:
    """The system and user messages of one run (the client adds the JSON instruction)."""
    folders = " and ".join(f"{c}/" for c in spec.categories)
    steps = "\n".join(f"{n}. {step}" for n, step in enumerate(spec.behaviour, 1))
    mode = spec.bootstrap if run.bootstrap else (
        "REVIEW MODE: compare the recent work with the existing documents and report what deviates.")
    system = (
        f"You are the {spec.label.lower()} of an AI agent (Agent-Zero) working on a software project.\n"
        f"Purpose: {spec.purpose}\n\nBehaviour:\n{steps}\n\n{mode}\n\n"
        f"Ownership: you may write knowledge documents only in {folders}; other folders belong to other supervisors. "
        "Documents marked read-only were written by a person: never rewrite them. " + spec.writing
    )
    sections = [
        ("RECENT TASKS", digests_section(run.digests)),
        (f"KNOWLEDGE: YOUR DOCUMENTS ({folders})", documents_section(run.own_documents, True, OWN_DOCUMENT_CHARS)),
        ("KNOWLEDGE: OTHER DOCUMENTS (titles)", documents_section(run.other_documents, False, OTHER_DOCUMENT_CHARS)),
        ("PENDING DIRECTIVES", _cap("\n".join(f"- {d}" for d in run.directives), DIRECTIVE_CHARS) or "(none)"),
    ]
    if spec.reads_files:
        files = "\n\n".join(f"### {name}\n```\n{text}\n```" for name, text in run.files if text is not None)
        unread = [name for name, text in run.files if text is None]
        files += ("\n\n" if files else "") + ("Not read: " + ", ".join(unread) if unread else "")
        sections.append(("FILES THE RECENT TASKS TOUCHED", files or "(none could be read)"))
    if spec.reads_files and run.codebase is not None and (run.codebase.layout or run.codebase.files):
        room = PROMPT_CHARS - sum(len(title) + len(body) + 5 for title, body in sections) - (FINDINGS_CHARS if run.previous_findings else 0)
        sections.append(("CODE BASE (bootstrap scan: the project's layout and a sample of its files)", codebase_text(run.codebase, room)))
    if run.previous_findings:
        sections.append(("YOUR PREVIOUS FINDINGS (use the same wording for what is still true)",
                         _cap("\n".join(f"- {f}" for f in run.previous_findings), FINDINGS_CHARS)))
    user = "\n\n".join(f"## {title}\n{body}" for title, body in sections)
    return [{"role": "system", "content": system}, {"role": "user", "content": redact(user)}]


# --------------------------------------------------------------------------- what an answer changes


@dataclass
class Changes:
    """What one valid answer asks for, before anything is written."""

    documents: list[KnowledgeDraft] = field(default_factory=list)
    reviews: list[KnowledgeDraft] = field(default_factory=list)
    directives: list[DirectiveDraft] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    finding_count: int = 0
    notes: list[str] = field(default_factory=list)
    summary: str = ""


def changes_from(spec: SupervisorSpec, output: BaseModel, run: RunInput, existing: dict[str, Document]) -> Changes:
    """Turn a validated answer into drafts for the store and the directive queue."""
    if isinstance(output, InternaliserOutput):
        return _internaliser_changes(output, existing)
    assert isinstance(output, (CodeStyleOutput, DesignOutput))
    documents = output.conventions_updated if isinstance(output, CodeStyleOutput) else output.design_updates
    found = output.inconsistencies if isinstance(output, CodeStyleOutput) else output.divergences
    directives = [DirectiveDraft(type=d.type, source=spec.name, description=d.description, rationale=d.rationale,
                                 priority=d.priority, files=list(d.files)) for d in output.directives]
    changes = Changes(documents=list(documents), findings=list(found) + [d.description for d in directives],
                      finding_count=len(found), summary=output.summary)
    if run.bootstrap:
        kept = [d for d in directives if d.type != "cleanup"]
        if len(kept) < len(directives):
            changes.notes.append(f"bootstrap: {len(directives) - len(kept)} cleanup directive(s) dropped")
        directives = kept
    changes.directives = directives
    return changes


def _internaliser_changes(output: InternaliserOutput, existing: dict[str, Document]) -> Changes:
    changes = Changes(findings=[item.content for item in output.knowledge_items],
                      finding_count=len(output.knowledge_items), summary=output.summary)
    grouped: dict[tuple[str, str], list[KnowledgeItem]] = {}
    for item in output.knowledge_items:
        category = "lessons" if item.category == "lesson" else "domain"
        name = item.topic or category
        if item.needs_user_review:
            changes.reviews.append(_review_draft(category, name, item))
        else:
            grouped.setdefault((category, name), []).append(item)
    for (category, name), items in grouped.items():
        changes.documents.append(_merged_draft(category, name, items, existing.get(f"{category}/{name}.md")))
    return changes


def _rule(item: KnowledgeItem) -> str:
    source = f"task {item.source_task}" if item.source_task and not item.source_task.lower().startswith("task") else item.source_task
    notes = ", ".join(n for n in (source, f"{item.confidence} confidence" if item.confidence != "high" else "") if n)
    return f"{item.content} ({notes})" if notes else item.content


def existing_rules(document: Document | None) -> list[str]:
    if document is None or document.hand_written:
        return []
    return [m.group(1) for m in map(_RULE_LINE.match, document.sections.get("rules", "").splitlines()) if m]


def _merged_draft(category: str, name: str, items: list[KnowledgeItem], document: Document | None) -> KnowledgeDraft:
    """Lessons accumulate: the document keeps its rules and gains the new items (the newest 30 kept)."""
    rules = existing_rules(document)
    seen = {" ".join(r.lower().split()) for r in rules}
    added = [r for r in map(_rule, items) if " ".join(r.lower().split()) not in seen]
    title = document.title if document is not None else name.replace("_", " ").replace("-", " ").capitalize()
    meta = document.meta if document is not None else None
    return KnowledgeDraft(
        category=category, name=name, title=title, rules=[r[:500] for r in (rules + added)[-30:]],
        examples=document.sections.get("examples", "")[:4000] if document is not None and meta is not None else "",
        rationale=document.sections.get("rationale", "")[:2000] if document is not None and meta is not None else "",
        domains=list(meta.domains) if meta else [], tags=list(meta.tags) if meta else [],
        change=f"{len(added)} item(s) added" if added else "reviewed",
    )


def _review_draft(category: str, name: str, item: KnowledgeItem) -> KnowledgeDraft:
    """An item for a person gets its own small document, held back until approved."""
    digest = hashlib.sha1(item.content.encode("utf-8")).hexdigest()[:6]
    return KnowledgeDraft(category=category, name=f"{name[:56]}-{digest}", title=item.content[:80], rules=[_rule(item)[:500]],
                          change="flagged for review")
