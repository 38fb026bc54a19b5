"""What the pack remembers across a long chat stays bounded, and keeps its newest entries."""

from org.kernel import log
from org.kernel.bounded import drop_oldest
from org.kernel.outcomes import CONSECUTIVE_LIMIT, FAILURES_KEY, KNOWN_LINES_LIMIT, SEEN_LIMIT, ledger_of, record_outcome


def test_the_oldest_entries_go_first_and_one_inserted_again_is_new():
    memory = dict.fromkeys("abcde")
    memory.pop("a")
    memory["a"] = None  # seen again: now the newest
    drop_oldest(memory, 3)
    assert list(memory) == ["d", "e", "a"]
    drop_oldest(memory, 5)
    assert list(memory) == ["d", "e", "a"]


def test_a_long_chat_of_new_calls_keeps_the_ledger_s_memories_bounded_and_the_latest_known():
    data: dict = {}
    for n in range(SEEN_LIMIT + 300):
        record_outcome(data, "code_execution_tool", {"runtime": "terminal", "code": f"cat part_{n}.txt"}, f"line {n}\n" * 3)
        record_outcome(data, f"invented_tool_{n}", {}, f"Error: tool invented_tool_{n} not found")
    ledger = ledger_of(data)
    assert len(ledger.seen) <= SEEN_LIMIT and len(ledger.known_lines) <= KNOWN_LINES_LIMIT
    assert len(data[FAILURES_KEY]["consecutive"]) <= CONSECUTIVE_LIMIT
    latest = n
    again = record_outcome(data, "code_execution_tool", {"runtime": "terminal", "code": f"cat part_{latest}.txt"}, f"line {latest}\n" * 3)
    assert not again.novel  # the latest look is still remembered: showing it again learns nothing


def test_problems_logged_once_are_remembered_up_to_a_bound(monkeypatch):
    monkeypatch.setattr(log, "_already_logged", {})
    for n in range(log._MAX_REMEMBERED + 50):
        log.warn_once(f"agent.data['x{n}']: not a dict; started afresh")
    assert len(log._already_logged) == log._MAX_REMEMBERED
    assert not log.warn_once(f"agent.data['x{n}']: not a dict; started afresh")  # the newest is still known
