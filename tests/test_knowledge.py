"""The knowledge store: ownership, a person's documents, index, change log, promotion,
review queue (through the real command line), redaction, and the injected section's cap."""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pack_commands import a0org

from org.contracts.knowledge import CATEGORIES, OWNERSHIP, KnowledgeDraft
from org.knowledge import (
    KnowledgeStore,
    OwnershipError,
    ReviewError,
    estimate_tokens,
    project_knowledge_section,
    redact,
)
from org.knowledge.documents import Document
from org.knowledge.selection import HEADER, render_section, select_documents

ROOT = Path(__file__).resolve().parent.parent
OWNER_OF = {"conventions": "code_style", "design": "design", "lessons": "internaliser", "domain": "internaliser"}


def draft(category: str = "conventions", name: str = "error_handling", **fields) -> KnowledgeDraft:
    values = {"title": name.replace("_", " ").capitalize(), "rules": [f"Rule one of {name}.", f"Rule two of {name}."],
              "examples": "Good:\n  raise ToolError(msg)", "rationale": "Consistency.", **fields}
    return KnowledgeDraft(category=category, name=name, **values)


@pytest.fixture
def store(tmp_path) -> KnowledgeStore:
    return KnowledgeStore(tmp_path / "knowledge", establish_after_tasks=3)


def front_matter(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


def refusals(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "a0org" and r.getMessage().startswith("knowledge:")]


# -- ownership -------------------------------------------------------------------------------


@pytest.mark.parametrize("category", CATEGORIES)
def test_each_supervisor_writes_its_own_folders(store, category):
    outcome = store.write(draft(category, "first"), OWNER_OF[category], task=4)
    assert outcome.action == "created"
    path = store.root / category / "first.md"
    meta = front_matter(path)
    assert (meta["author"], meta["last_updated_by"], meta["status"], meta["category"]) == (OWNER_OF[category], OWNER_OF[category], "provisional", category)
    assert meta["updated_after_task"] == 4


@pytest.mark.parametrize("writer,category", [(w, c) for w in [*OWNERSHIP, "agent", "human", "code_style_supervisor"]
                                             for c in CATEGORIES if c not in OWNERSHIP.get(w, ())])
def test_writes_outside_the_owned_folders_are_refused_with_one_log_line(store, caplog, writer, category):
    caplog.set_level(logging.INFO, logger="a0org")
    with pytest.raises(OwnershipError, match=f"{writer} may not write {category}/"):
        store.write(draft(category, "intrusion"), writer)
    assert not (store.root / category / "intrusion.md").exists()
    assert len([m for m in refusals(caplog) if "may not write" in m]) == 1
    with pytest.raises(OwnershipError):
        store.queue_for_review(draft(category, "intrusion"), writer)
    assert store.review_items() == []


# -- a person's documents ----------------------------------------------------------------------


HAND_WRITTEN = {
    "plain.md": "# Testing\n\n- Use pytest; no mocks where the real thing runs.\n",
    "human_front_matter.md": "---\ntitle: Logging\nauthor: human\ntags: [logs]\n---\n# Logging\n\n## Rules\n1. Log once per problem.\n",
    "own_front_matter.md": "---\ntitle: Naming\nlayout: page\ntags: [Names, snake_case]\nstatus: provisional\n---\nUse snake_case.\n",
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_a_persons_document_is_read_shown_and_never_overwritten(store, caplog, name):
    caplog.set_level(logging.INFO, logger="a0org")
    path = store.root / "conventions" / name
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN[name], encoding="utf-8")
    document = store.get(f"conventions/{name}")
    assert document.hand_written and document.meta is None
    section = project_knowledge_section(store, None, "anything", 2000)
    assert document.title in section and document.guidance.splitlines()[-1] in section

    outcome = store.write(draft("conventions", name.removesuffix(".md"), title="Replacement"), "code_style")
    assert outcome.action == "queued_for_review" and outcome.review_id == "R1"
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN[name]
    assert any("is a person's document" in m and "R1" in m for m in refusals(caplog))
    # the same proposal again is the same review item, not a second one
    assert store.write(draft("conventions", name.removesuffix(".md"), title="Replacement"), "code_style").review_id == "R1"
    assert [i.id for i in store.review_items()] == ["R1"]
    assert store.note_task_completed(problems=False) == []
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN[name]


@pytest.mark.parametrize("kind", ["not_utf8", "dangling_link"])
def test_a_file_that_cannot_be_read_as_a_document_is_never_overwritten(store, kind):
    path = store.root / "conventions" / "legacy.md"
    path.parent.mkdir(parents=True)
    if kind == "not_utf8":
        path.write_bytes(b"# Legacy\n\ncaf\xe9 au lait\n")
    else:
        path.symlink_to(store.root / "elsewhere.md")
    before = path.read_bytes() if kind == "not_utf8" else None
    outcome = store.write(draft("conventions", "legacy"), "code_style")
    assert outcome.action == "queued_for_review"
    [item] = store.review_items()
    assert item.replaces_hand_written
    if kind == "dangling_link":
        assert path.is_symlink() and not path.exists()
        with pytest.raises(ReviewError, match="cannot be kept before it is replaced"):
            store.approve(item.id)
        assert path.is_symlink()
        return
    assert path.read_bytes() == before
    store.approve(item.id)  # a person's choice: the old bytes are kept as they were
    assert (store.root / "_review" / "replaced" / f"{item.id}-conventions-legacy.md").read_bytes() == before
    assert front_matter(path)["author"] == "human"


def test_a_path_that_climbs_out_of_the_store_is_no_document(store):
    store.write(draft("conventions", "errors"), "code_style")
    assert store.get("conventions/../../outside.md") is None and store.get("conventions/errors.md") is not None
    shown = a0org("knowledge", "show", "conventions/../../../etc/passwd", "--root", str(store.root))
    assert shown.returncode == 1 and "Traceback" not in shown.stderr


def test_own_front_matter_gives_title_status_and_keywords(store):
    path = store.root / "conventions" / "own_front_matter.md"
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN["own_front_matter.md"], encoding="utf-8")
    document = store.get("conventions/own_front_matter.md")
    assert (document.title, document.status, document.tags) == ("Naming", "provisional", ("names", "snake_case"))


def test_approving_a_change_to_a_persons_document_keeps_the_old_text_and_the_persons_ownership(store):
    path = store.root / "conventions" / "plain.md"
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN["plain.md"], encoding="utf-8")
    review_id = store.write(draft("conventions", "plain", title="Testing, revised"), "code_style").review_id
    store.approve(review_id)
    meta = front_matter(path)
    assert (meta["title"], meta["author"], meta["status"]) == ("Testing, revised", "human", "established")
    kept = store.root / "_review" / "replaced" / f"{review_id}-conventions-plain.md"
    assert kept.read_text(encoding="utf-8") == HAND_WRITTEN["plain.md"]
    # approved by a person, so it is theirs now: the supervisor cannot overwrite it either
    before = path.read_text(encoding="utf-8")
    assert store.write(draft("conventions", "plain", title="Again"), "code_style").action == "queued_for_review"
    assert path.read_text(encoding="utf-8") == before


def test_broken_pack_front_matter_is_named_and_the_document_is_protected(store, caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    store.write(draft("design", "architecture"), "design")
    path = store.root / "design" / "architecture.md"
    path.write_text(path.read_text(encoding="utf-8").replace("status: provisional", "status: maybe"), encoding="utf-8")
    document = store.get("design/architecture.md")
    assert document.hand_written
    warning = [r.getMessage() for r in caplog.records if "status" in r.getMessage() and "architecture.md" in r.getMessage()]
    assert len(warning) == 1 and f"{path}:5: status:" in warning[0]  # line 1 is the opening ---
    assert store.write(draft("design", "architecture", title="New"), "design").action == "queued_for_review"


# -- index and change log ---------------------------------------------------------------------


def test_index_is_current_after_every_change(store):
    def index() -> str:
        text = store.index_path.read_text(encoding="utf-8")
        assert text == store.render_index()
        return text

    store.write(draft("conventions", "errors"), "code_style")
    assert "[Errors](conventions/errors.md): provisional, by code_style" in index()
    store.write(draft("lessons", "reducers", tags=["state"]), "internaliser")
    assert "(lessons/reducers.md): provisional, by internaliser" in index() and "; state" in index()
    (store.root / "domain").mkdir()
    (store.root / "domain" / "colonies.md").write_text("# Colonies\n\nA colony has one queen.\n", encoding="utf-8")
    store.write(draft("conventions", "errors", rules=["Changed."]), "code_style")
    assert "[Colonies](domain/colonies.md): established, hand-written" in index()
    for _ in range(3):
        store.note_task_completed(problems=False)
    assert "(conventions/errors.md): established" in index()
    store.queue_for_review(draft("lessons", "held_back"), "internaliser", "implicit decision")
    assert "1 item(s) awaiting review" in index()
    store.reject("R1")
    assert "0 item(s) awaiting review" in index() and "3 document(s)" in index()


def test_change_log_records_who_after_which_task_and_what(store):
    store.write(draft("conventions", "errors", change="first convention for errors"), "code_style", task=5)
    assert store.write(draft("conventions", "errors", change="ignored"), "code_style", task=6).action == "unchanged"
    store.write(draft("conventions", "errors", rules=["Only ToolError."], change="merged the two rules"), "code_style", task=9)
    log = store.get("conventions/errors.md").change_log
    assert len(log) == 2
    assert log[0].endswith("code_style, after task 5: first convention for errors")
    assert log[1].endswith("code_style, after task 9: merged the two rules")
    text = (store.root / "conventions" / "errors.md").read_text(encoding="utf-8")
    assert text.index("## Rules") < text.index("## Examples") < text.index("## Rationale") < text.index("## Change log")
    assert "_Last updated by: code_style, after task 9_" in text and "1. Only ToolError." in text


# -- promotion ------------------------------------------------------------------------------


def test_provisional_becomes_established_after_n_clean_tasks_and_a_problem_restarts_the_count(store):
    store.write(draft("conventions", "errors"), "code_style")
    assert store.note_task_completed(problems=False) == []
    assert store.note_task_completed(problems=True) == []
    assert front_matter(store.root / "conventions" / "errors.md")["clean_tasks"] == 0
    assert [store.note_task_completed(problems=False) for _ in range(3)] == [[], [], ["conventions/errors.md"]]
    document = store.get("conventions/errors.md")
    assert document.status == "established" and document.change_log[-1].endswith("established after 3 tasks without problems")
    assert "_Status: established_" in (store.root / "conventions" / "errors.md").read_text(encoding="utf-8")
    # a rewrite is a new guess: provisional again
    store.write(draft("conventions", "errors", rules=["Different."]), "code_style")
    assert store.get("conventions/errors.md").status == "provisional"


def test_a_supervisor_deprecates_its_own_document_and_it_leaves_the_prompt(store):
    store.write(draft("design", "storage", tags=["storage"]), "design")
    assert "Storage" in project_knowledge_section(store, None, "storage layer", 2000)
    store.write(draft("design", "storage", tags=["storage"], status="deprecated", change="array storage is gone"), "design")
    assert store.get("design/storage.md").status == "deprecated"
    assert project_knowledge_section(store, None, "storage layer", 2000) == ""
    assert store.note_task_completed(problems=False) == []


# -- review queue through the command line ------------------------------------------------------


def test_review_approve_and_reject_through_the_command_line(store):
    store.queue_for_review(draft("lessons", "reducers", title="Reducers drop None"), "internaliser", "library behaviour", task=7)
    store.queue_for_review(draft("domain", "queens", title="One queen per colony"), "internaliser", "implicit domain rule")
    store.write(draft("conventions", "errors"), "code_style")
    store.queue_for_review("conventions/errors.md", "code_style", "inconsistent with tools/")
    root = str(store.root)

    listing = a0org("knowledge", "review", "--root", root)
    assert listing.returncode == 0, listing.stderr
    assert "R1  pending  from internaliser, after task 7" in listing.stdout and "write lessons/reducers.md" in listing.stdout
    assert "R3  pending  from code_style" in listing.stdout and "confirm conventions/errors.md" in listing.stdout
    assert "3 item(s) awaiting review" in listing.stdout and "Reducers drop None" in listing.stdout

    assert a0org("knowledge", "review", "--root", root, "--approve", "R1").stdout.strip() == "R1 approved"
    assert front_matter(store.root / "lessons" / "reducers.md")["status"] == "established"
    assert a0org("knowledge", "review", "--root", root, "--reject", "r2").stdout.strip() == "R2 rejected"
    assert not (store.root / "domain" / "queens.md").exists()
    assert a0org("knowledge", "review", "--root", root, "--reject", "R3").returncode == 0
    assert store.get("conventions/errors.md").status == "deprecated"
    assert "deprecated by human (R3)" in store.get("conventions/errors.md").change_log[-1]

    again = a0org("knowledge", "review", "--root", root, "--approve", "R1")
    assert again.returncode == 1 and "no pending review item R1" in again.stderr
    done = a0org("knowledge", "review", "--root", root, "--all")
    assert "0 item(s) awaiting review" in done.stdout and "R2  rejected" in done.stdout
    assert sorted(p.name for p in (store.root / "_review" / "done").iterdir()) == ["R1.json", "R2.json", "R3.json"]
    assert "0 item(s) awaiting review" in store.index_path.read_text(encoding="utf-8")


def test_approving_a_flagged_document_establishes_it(store):
    store.write(draft("lessons", "reducers"), "internaliser")
    item = store.queue_for_review("lessons/reducers.md", "internaliser", "check this")
    assert store.queue_for_review("lessons/reducers.md", "internaliser", "check this").id == item.id
    store.approve(item.id)
    assert store.get("lessons/reducers.md").status == "established"
    with pytest.raises(ReviewError):
        store.queue_for_review("lessons/nothing.md", "internaliser")


def test_list_show_and_preview_commands(store, tmp_path):
    store.write(draft("conventions", "errors"), "code_style")
    root = str(store.root)
    listing = a0org("knowledge", "list", "--root", root)
    assert "conventions/errors.md" in listing.stdout and "1 document(s)" in listing.stdout
    shown = a0org("knowledge", "show", "errors", "--root", root)
    assert shown.stdout == (store.root / "conventions" / "errors.md").read_text(encoding="utf-8")
    assert a0org("knowledge", "show", "nothing", "--root", root).returncode == 1
    preview = a0org("knowledge", "preview", "--root", root, "--directives", str(tmp_path / "none.json"))
    assert preview.stdout.startswith(HEADER) and "Rule one of errors." in preview.stdout


# -- redaction ----------------------------------------------------------------------------------


SECRETS = {
    "openai": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5q" * 2,
    "openrouter": "sk-or-v1-" + "0123456789abcdef" * 4,
    "github": "ghp_" + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2",
    "github_pat": "github_pat_" + "11ABCDEFG0123456789_" + "abcdefghij" * 4,
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "bearer": "Bearer " + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq4\nq2Yz9x8w==\n-----END RSA PRIVATE KEY-----",
    "password": "password=Tr0ub4dor&3",
    "token": 'token: "a8f5f167f44f4964e6c998dee827110c"',
    "secret": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "url": "postgres://admin:s3cr3tpw@db.internal:5432/app",
}
#: What must be gone from the text after redaction (the secret part of each sample).
SECRET_PART = {**{k: v for k, v in SECRETS.items()}, "bearer": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA", "pem": "MIIEowIBAAKCAQEA7bq4",
               "password": "Tr0ub4dor&3", "token": "a8f5f167f44f4964e6c998dee827110c",
               "secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "url": "s3cr3tpw"}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_redact_removes_each_kind_of_secret(kind):
    text = f"before {SECRETS[kind]} after"
    cleaned = redact(text)
    assert SECRET_PART[kind] not in cleaned and "[REDACTED]" in cleaned
    assert cleaned.startswith("before") and redact(cleaned) == cleaned


@pytest.mark.parametrize("text", [
    "max_tokens=4096", "api_key_env: OPENROUTER_API_KEY", "token: 500", "task-0123456789abcdefghij",
    "password=${DB_PASSWORD}", "the tokenizer splits words", "-----BEGIN PUBLIC KEY-----",
])
def test_redact_leaves_ordinary_text_alone(text):
    assert redact(text) == text


_SECRETISH = st.sampled_from(list("abcxyzAKI0129 =:_-\"'\n/.@") + [
    "sk-", "ghp_", "password", "token", "Bearer ", "eyJ", "-----BEGIN PRIVATE KEY-----", "[REDACTED]", "://u:"])


@settings(deadline=None)  # time is the benchmarks' to judge: a loaded machine is no failure
@given(st.lists(_SECRETISH, max_size=60).map("".join))
def test_redact_is_idempotent(text):
    once = redact(text)
    assert redact(once) == once


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_no_secret_reaches_any_file_of_the_store(store, kind):
    secret = SECRETS[kind]
    one_line = " ".join(secret.split()) if kind != "pem" else secret
    store.write(draft("conventions", "leaky", title=f"Leak {one_line}"[:200], rules=[f"Never commit {one_line}"],
                      examples=f"config:\n  {secret}", rationale=f"seen {secret}", change=f"found {one_line}"), "code_style", task=1)
    store.write(draft("conventions", "leaky", rules=[f"Rotate {one_line}"], change=f"again {one_line}"), "code_style", task=2)
    store.queue_for_review(draft("lessons", "leak", title="Leak", rules=[f"Seen {one_line}"], examples=secret), "internaliser",
                           reason=f"contains {one_line}")
    store.queue_for_review("conventions/leaky.md", "code_style", reason=f"check {one_line}")
    store.note_task_completed(problems=False)
    files = [p for p in store.root.rglob("*") if p.is_file() and p.name != ".lock"]
    assert {p.relative_to(store.root).as_posix() for p in files} >= {"_index.md", "conventions/leaky.md", "_review/R1.json", "_review/R2.json"}
    for path in files:
        assert SECRET_PART[kind] not in path.read_text(encoding="utf-8"), path
    assert "[REDACTED]" in (store.root / "conventions" / "leaky.md").read_text(encoding="utf-8")
    assert SECRET_PART[kind] not in project_knowledge_section(store, None, "leak", 2000)


def test_section_redacts_a_persons_document_too(store):
    (store.root / "conventions").mkdir(parents=True)
    (store.root / "conventions" / "keys.md").write_text(f"# Keys\n\nThe key is {SECRETS['openrouter']}.\n", encoding="utf-8")
    section = project_knowledge_section(store, None, None, 2000)
    assert "The key is [REDACTED]." in section


# -- selection and the budget -------------------------------------------------------------------


def test_selection_conventions_always_matching_design_and_recent_lessons(store):
    store.write(draft("conventions", "errors"), "code_style")
    store.write(draft("design", "storage", title="Colony storage", domains=["simulation"]), "design")
    store.write(draft("design", "rendering", title="Renderer pipeline", tags=["opengl"]), "design")
    store.write(draft("domain", "queens", title="Queens", domains=["biology"]), "internaliser")
    for number in range(7):
        store.write(draft("lessons", f"lesson_{number}"), "internaliser")
    section = project_knowledge_section(store, "simulation", "add a save button", 5000, recent_lessons=5)
    assert section.startswith(HEADER + "\n")
    assert "Errors" in section and "Colony storage" in section
    assert "Renderer pipeline" not in section and "Queens" not in section
    shown_lessons = [n for n in range(7) if f"Lesson {n} (" in section]
    assert shown_lessons == [2, 3, 4, 5, 6]
    by_plan = project_knowledge_section(store, None, "Fix the OpenGL renderer crash", 5000)
    assert "Renderer pipeline" in by_plan and "Colony storage" not in by_plan
    assert section.index("Errors") < section.index("Colony storage") < section.index("Lesson 6")


def test_empty_store_gives_no_section(store):
    assert project_knowledge_section(store, "anything", "plan", 2000) == ""


def test_a_large_document_is_cut_and_lower_priority_content_dropped(store):
    store.write(draft("conventions", "huge", rules=[f"Rule number {n} " + "word " * 60 for n in range(30)]), "code_style")
    store.write(draft("lessons", "small"), "internaliser")
    section = project_knowledge_section(store, None, None, 600)
    assert estimate_tokens(section) <= 600
    assert "cut to fit; the whole document is conventions/huge.md" in section
    assert "Small" in section  # half the budget at most for one document, so the lesson still fits


@pytest.mark.parametrize("text", [
    "Tools raise ToolError with a descriptive message, never bare Exception.",
    "def load(path: Path) -> dict:\n    return json.loads(path.read_text())\n",
    "a b c d e f g", "{}[]()<>;;;:::", "Ünïcödé テキスト 🙂",
])
def test_estimate_is_at_least_the_four_characters_per_token_rule(text):
    assert estimate_tokens(text) >= len(text) / 4


_STATUSES = st.sampled_from(["provisional", "established", "deprecated"])
_WORDS = st.sampled_from(["storage", "api", "errors", "render", "queue", "test", "x", "ünï", "🙂", "{}", "\n", "def f():", "a" * 50])
_TEXT = st.lists(_WORDS, max_size=200).map(" ".join)


@st.composite
def documents(draw) -> list[Document]:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for index in range(draw(st.integers(0, 12))):
        category = draw(st.sampled_from(CATEGORIES))
        body = draw(_TEXT)
        with_rules = draw(st.booleans())
        sections = {"rules": body, "examples": draw(_TEXT)} if with_rules else {}
        out.append(Document(
            path=f"{category}/doc_{index}.md", category=category, title=draw(_TEXT.map(lambda t: t[:80] or "t")),
            status=draw(_STATUSES), author="human", hand_written=True, sections=sections, body=body,
            domains=tuple(draw(st.lists(st.sampled_from(["storage", "api", "render"]), max_size=2))),
            tags=tuple(draw(st.lists(st.sampled_from(["errors", "queue", "test"]), max_size=2))),
            updated_at=now - timedelta(minutes=draw(st.integers(0, 10_000))), meta=None,
        ))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents(), budget=st.integers(0, 3000), domain=st.sampled_from([None, "storage", "api"]), plan=_TEXT)
def test_the_section_never_exceeds_its_budget(docs, budget, domain, plan):
    chosen = select_documents(docs, domain, plan)
    section = render_section(chosen, budget)
    assert estimate_tokens(section) <= budget
    assert section == "" or section.startswith(HEADER + "\n")
    assert all(d.status != "deprecated" for d in chosen)
    if chosen and budget >= 2 * sum(estimate_tokens(d.title + d.guidance) + 40 for d in chosen) + 100:
        assert all(f"({d.path}, " in section for d in chosen)  # room for all: nothing left out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rules=st.lists(_TEXT.filter(lambda t: t.strip()).map(lambda t: t[:500]), min_size=1, max_size=8), budget=st.integers(0, 2500))
def test_the_section_of_a_real_store_never_exceeds_its_budget(tmp_path_factory, rules, budget):
    store = KnowledgeStore(tmp_path_factory.mktemp("k"))
    for index, rule in enumerate(rules):
        category = CATEGORIES[index % 4]
        store.write(draft(category, f"doc_{index}", rules=[rule], tags=["storage"]), OWNER_OF[category])
    section = project_knowledge_section(store, "storage", "storage", budget)
    assert estimate_tokens(section) <= budget
    assert section == "" or section.startswith(HEADER)


# -- several writers at once ---------------------------------------------------------------------


def test_concurrent_writers_leave_valid_documents_and_a_complete_index(store):
    errors: list[BaseException] = []

    def work(category: str, offset: int) -> None:
        try:
            for number in range(8):
                store.write(draft(category, f"doc_{offset + number}"), OWNER_OF[category])
                store.note_task_completed(problems=False)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(c, i * 100)) for i, c in enumerate(CATEGORIES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    documents_ = store.documents()
    assert len(documents_) == 32 and not any(d.hand_written for d in documents_)
    assert store.index_path.read_text(encoding="utf-8") == store.render_index()
    assert "32 document(s)" in store.render_index()


def test_commands_find_the_store_where_supervisors_yaml_puts_it(tmp_path):
    home = tmp_path / "organizations"
    home.mkdir()
    (home / "supervisors.yaml").write_text("model:\n  model: test/model\nknowledge:\n  root: kb\n", encoding="utf-8")
    KnowledgeStore(home / "kb").write(draft("design", "storage"), "design")
    env = {**os.environ, "A0ORG_HOME": str(home)}
    listing = a0org("knowledge", "list", env=env)
    assert listing.returncode == 0, listing.stderr
    assert "design/storage.md" in listing.stdout and f"1 document(s) in {home / 'kb'}" in listing.stdout


def test_an_edit_that_keeps_size_and_time_is_still_seen(store):
    store.write(draft("conventions", "errors", rules=["Use AAAA."]), "code_style")
    path = store.root / "conventions" / "errors.md"
    assert "Use AAAA." in KnowledgeStore(store.root).get("conventions/errors.md").sections["rules"]
    stat = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("Use AAAA.", "Use BBBB."), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "Use BBBB." in KnowledgeStore(store.root).get("conventions/errors.md").sections["rules"]


def test_a_broken_review_item_is_named_and_skipped(store, caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    store.queue_for_review(draft("lessons", "fine"), "internaliser")
    (store.review_dir / "R2.json").write_text('{"id": "R2", "source": "internaliser"}', encoding="utf-8")
    assert [item.id for item in store.review_items()] == ["R1"]
    assert any(f"{store.review_dir / 'R2.json'}:1: created_at: required field is missing (review item skipped)" in r.getMessage()
               for r in caplog.records)
    assert store.queue_for_review(draft("lessons", "next"), "internaliser").id == "R3"  # ids are never reused
