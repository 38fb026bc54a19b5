"""Knowledge documents on disk: markdown with YAML front matter, read and written.

A document the pack wrote looks like this (the seed's format plus front matter)::

    ---
    schema_version: 1
    title: Error handling
    category: conventions
    status: provisional
    author: code_style
    ...
    ---
    # Error handling

    _Last updated by: code_style, after task 12_
    _Status: provisional_

    ## Rules
    1. Tools raise ToolError with a message, never bare Exception.

    ## Examples
    ...
    ## Rationale
    ...
    ## Change log
    - 2025-01-03 10:00 UTC, code_style, after task 12: created

Anything else in the folders is a person's document: no front matter, front matter of
their own, or ``author: human``. It is read (title, status, domains and tags when given)
and never rewritten.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from org.contracts.knowledge import (
    HUMAN,
    SUPERVISOR_IDS,
    KnowledgeDocument,
    KnowledgeDraft,
)
from org.kernel.loading import DocumentError, Problem, load, load_yaml, parse, validate
from org.kernel.log import logger, warn_once
from org.kernel.redact import redact
from org.lazy_patterns import lazy_pattern

_FRONT_MATTER = lazy_pattern(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HEADING = lazy_pattern(r"^## +(.+?)\s*$", re.MULTILINE)
_TITLE = lazy_pattern(r"^# +(.+?)\s*$", re.MULTILINE)
_STATUS_LINE = lazy_pattern(r"^_Status: *(provisional|established|deprecated)_[ \t]*$", re.MULTILINE | re.IGNORECASE)
_STATUSES = ("provisional", "established", "deprecated")
M = TypeVar("M", bound=BaseModel)
_KEYWORD = lazy_pattern(r"^[a-z0-9][a-z0-9_.+-]{0,39}$")

#: Change log lines kept when a supervisor rewrites a document.
CHANGE_LOG_LIMIT = 50
CHANGE_LOG = "Change log"


@dataclass(frozen=True)
class Document:
    """One document as read from disk (the pack's or a person's)."""

    path: str  #: relative to the knowledge root, e.g. ``conventions/error_handling.md``
    category: str
    title: str
    status: str
    author: str
    hand_written: bool  #: a person's document: never overwritten by a supervisor
    sections: dict[str, str]  #: lower-case heading -> text, e.g. ``rules``, ``examples``
    body: str  #: markdown after the front matter
    domains: tuple[str, ...]
    tags: tuple[str, ...]
    updated_at: datetime
    meta: KnowledgeDocument | None  #: the pack's front matter; None for a person's document

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")

    @property
    def change_log(self) -> list[str]:
        """Change log entries, oldest first, without the leading ``- ``."""
        text = self.sections.get(CHANGE_LOG.lower(), "")
        return [line[2:].strip() for line in text.splitlines() if line.startswith("- ")]

    @property
    def guidance(self) -> str:
        """What the agent is shown: rules and examples, else the whole body."""
        rules = self.sections.get("rules", "").strip()
        if not rules:
            return _body_without_headers(self.body)
        examples = self.sections.get("examples", "").strip()
        return f"{rules}\nExamples:\n{examples}" if examples else rules


def _body_without_headers(body: str) -> str:
    """A person's document minus its title, status lines and change log."""
    text = _TITLE.sub("", body, count=1)
    text = re.sub(r"^_(Status|Last updated by):.*_\s*$", "", text, flags=re.MULTILINE | re.IGNORECASE)
    span = _section_span(text, CHANGE_LOG)
    if span:
        text = text[:span[0]] + text[span[2]:]
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _section_span(body: str, name: str) -> tuple[int, int, int] | None:
    """Where section ``name`` is: its heading's start, its text's start, its end."""
    matches = list(_HEADING.finditer(body))
    for index, match in enumerate(matches):
        if match.group(1).strip().lower() == name.lower():
            end = matches[index + 1].start() if index + 1 < len(matches) else len(body)
            return match.start(), match.end(), end
    return None


def _split_sections(body: str) -> tuple[str, dict[str, str]]:
    """Text before the first ``## `` heading, and heading -> text."""
    matches = list(_HEADING.finditer(body))
    lead = body[: matches[0].start()] if matches else body
    sections: dict[str, str] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(body)
        sections.setdefault(match.group(1).strip().lower(), body[match.end():end].strip("\n"))
    return lead, sections


def split_front_matter(text: str) -> tuple[str | None, str]:
    """The front matter's YAML text (None when there is none) and the body."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return None, text
    return match.group(1), text[match.end():]


def _keywords(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    words = (str(item).strip().lower() for item in value if isinstance(item, (str, int)))
    return tuple(word for word in words if _KEYWORD.match(word))


def _shifted(problem: Problem) -> Problem:
    """Front matter starts on the file's second line."""
    return Problem(problem.path, problem.line + 1 if problem.line else None, problem.field, problem.reason)


def _pack_meta(file_label: str, yaml_text: str, data: dict, category: str) -> KnowledgeDocument | None:
    """The front matter as the pack's contract; problems are logged once and give None."""
    try:
        meta = KnowledgeDocument.model_validate(data)
    except ValidationError:
        try:  # parsed again only to say on which line each problem is
            data, lines = parse(file_label, yaml_text)
            validate(KnowledgeDocument, data, file_label, lines)
        except DocumentError as exc:
            for problem in map(_shifted, exc.problems):
                warn_once(f"{problem} (read as a hand-written document until fixed)", key=f"knowledge:{file_label}:{problem.field}")
        return None
    if meta.category != category:
        line = next((n for n, text in enumerate(yaml_text.splitlines(), 1) if text.startswith("category:")), None)
        problem = _shifted(Problem(file_label, line, "category",
                                   f"is {meta.category!r} but the document is in {category}/ (read as a hand-written document until fixed)"))
        warn_once(str(problem), key=f"knowledge:{file_label}:category")
        return None
    return meta


def load_json(model: type[M], path: Path) -> M:
    """A JSON contract file; :class:`DocumentError` with file:line: field: reason when broken.

    The fast path is plain ``json`` and pydantic; only a broken file is parsed again
    for line numbers.
    """
    try:
        return model.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return load(model, path)


def parse_document(relpath: str, text: str, modified: datetime, file_label: str | None = None) -> Document:
    """Read one document; ``relpath`` is ``<category>/<name>.md``. Never raises on content."""
    file_label = file_label or relpath
    category = relpath.split("/", 1)[0]
    yaml_text, body = split_front_matter(text)
    data: Any = None
    if yaml_text is not None:
        try:
            data = load_yaml(yaml_text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else None
            warn_once(str(Problem(file_label, line, "", f"front matter is not valid YAML: {getattr(exc, 'problem', exc)}")), key=f"knowledge:{file_label}:yaml")
        if not isinstance(data, dict):
            data = None
    _, sections = _split_sections(body)
    meta = None
    if data is not None and data.get("author") in SUPERVISOR_IDS:
        meta = _pack_meta(file_label, yaml_text or "", data, category)
    if meta is not None:
        return Document(relpath, category, meta.title, meta.status, meta.author, False, sections, body,
                        tuple(meta.domains), tuple(meta.tags), meta.updated_at, meta)
    data = data or {}
    title = data.get("title") if isinstance(data.get("title"), str) else None
    if not title:
        heading = _TITLE.search(body)
        title = heading.group(1) if heading else relpath.rsplit("/", 1)[-1].removesuffix(".md").replace("_", " ").capitalize()
    status = data.get("status") if data.get("status") in _STATUSES else None
    if status is None:
        line = _STATUS_LINE.search(body)
        status = line.group(1).lower() if line else "established"  # a person's word stands
    author = data.get("author") if isinstance(data.get("author"), str) and data.get("author") else HUMAN
    return Document(relpath, category, title.strip(), status, author, True, sections, body,
                    _keywords(data.get("domains")), _keywords(data.get("tags")), modified, None)


def utc_now() -> datetime:
    return datetime.now(UTC)


def change_entry(when: datetime, by: str, task: int | None, what: str) -> str:
    """One change log line: when, who, after which task, what changed."""
    after = f", after task {task}" if task is not None else ""
    what = " ".join(what.split()) or "updated"
    return redact(f"{when.astimezone(UTC):%Y-%m-%d %H:%M} UTC, {by}{after}: {what}")[:400]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _block(text: str) -> str:
    """Free text inside a section: a line starting with '#' could open a new section."""
    lines = text.strip("\n").splitlines()
    return "\n".join("  " + line if line.lstrip().startswith("#") else line for line in lines).rstrip()


def redact_draft(draft: KnowledgeDraft) -> KnowledgeDraft:
    """The draft with secrets removed from every text field."""
    # clipped to the contract's lengths: a short secret's mark can be longer than the secret
    return draft.model_copy(update={
        "title": redact(draft.title)[:200],
        "rules": [redact(rule)[:500] for rule in draft.rules],
        "examples": redact(draft.examples)[:4000],
        "rationale": redact(draft.rationale)[:2000],
        "change": redact(draft.change)[:300],
    })


def rules_text(draft: KnowledgeDraft) -> str:
    return "\n".join(f"{number}. {_flat(rule)}" for number, rule in enumerate(draft.rules, 1))


def _front_matter(meta: KnowledgeDocument) -> str:
    data = meta.model_dump(mode="json")
    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000) + "---\n"


def _byline(meta: KnowledgeDocument) -> str:
    after = f", after task {meta.updated_after_task}" if meta.updated_after_task is not None else ""
    return f"_Last updated by: {meta.last_updated_by}{after}_\n_Status: {meta.status}_"


def render_document(meta: KnowledgeDocument, draft: KnowledgeDraft, change_log: list[str]) -> str:
    """The whole file for a document the pack writes."""
    parts = [f"# {_flat(meta.title)}", _byline(meta), "## Rules\n\n" + (rules_text(draft) or "_(none yet)_")]
    if draft.examples.strip():
        parts.append("## Examples\n\n" + _block(draft.examples))
    if draft.rationale.strip():
        parts.append("## Rationale\n\n" + _block(draft.rationale))
    kept = change_log[-CHANGE_LOG_LIMIT:]
    parts.append(f"## {CHANGE_LOG}\n\n" + "\n".join(f"- {entry}" for entry in kept))
    return _front_matter(meta) + redact("\n\n".join(parts) + "\n")  # front matter: from redacted fields


def restamp(text: str, meta: KnowledgeDocument, entry: str | None) -> str:
    """A pack document with new front matter and status line, and optionally one more
    change log entry; everything else in it is kept as it is."""
    _, body = split_front_matter(text)
    body = _STATUS_LINE.sub(f"_Status: {meta.status}_", body, count=1)
    if entry:
        body = _append_change(body, entry)
    return _front_matter(meta) + redact(body)


def _append_change(body: str, entry: str) -> str:
    span = _section_span(body, CHANGE_LOG)
    if span is None:
        return body.rstrip("\n") + f"\n\n## {CHANGE_LOG}\n\n- {entry}\n"
    _, start, end = span
    rest = body[end:]
    return body[:start] + body[start:end].rstrip("\n") + f"\n- {entry}\n" + ("\n" + rest if rest else "")


def same_content(document: Document, draft: KnowledgeDraft) -> bool:
    """True when writing ``draft`` would change nothing a reader sees."""
    meta = document.meta
    if meta is None:
        return False
    return (
        meta.title == _flat(draft.title)
        and document.sections.get("rules", "").strip() == (rules_text(draft) or "_(none yet)_")
        and document.sections.get("examples", "").strip() == _block(draft.examples).strip()
        and document.sections.get("rationale", "").strip() == _block(draft.rationale).strip()
        and list(meta.domains) == list(draft.domains)
        and list(meta.tags) == list(draft.tags)
        and (draft.status != "deprecated" or meta.status == "deprecated")
    )


def log_refusal(message: str) -> None:
    """One log line for a write the store refused or redirected."""
    logger.warning("knowledge: %s", message)
