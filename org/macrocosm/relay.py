"""The learning relay: what one unit learned goes, as information, to the units that need it.

A unit publishes its learnings in its report (``signals.learnings``,
:mod:`org.supervisor.learnings`). For each new one the XO picks the other units working in
the same domain or naming the same files or programs (a lesson, which names none, goes to the
units of the same role when it has no domain), and queues it for them:

* never back to its source, and never twice to a unit (by digest, kept in the unit's state,
  so an XO restart changes nothing; a unit that published a learning itself never gets it);
* at most one message per unit every :data:`RELAY_INTERVAL_SECONDS`, with at most
  :data:`PER_MESSAGE` learnings, and at most :data:`QUEUE_KEPT` waiting (the oldest go first);
* the text is another unit's, so it is quoted in the safe character set, each learning at
  most :data:`~org.contracts.learning.MAX_LEARNING_CHARS` characters.

The message is signed and delivered like steering, as kind ``inform``: the unit adds it to
the chat as information, not as a warning (docs/macrocosm.md#learning-relay).
"""

from __future__ import annotations

import functools
from collections import defaultdict

from org.contracts.learning import MAX_LEARNING_CHARS, Learning
from org.contracts.salute import SaluteSignals
from org.supervisor.learnings import path_tokens, program_of

from .policy import Steering
from .roles import safe_text
from .state import UnitState

RELAY_INTERVAL_SECONDS = 300.0
PER_MESSAGE = 3
QUEUE_KEPT = 8
LEARNED_KEPT = 512
TOPICS_KEPT = 64
#: A file name or program longer than this is no topic of anyone's: one unit's calls must not
#: grow what the XO keeps about it (or, through a learning, about another unit) without bound.
TOPIC_CHARS = 120
HEADING = "Information from other units (what they found out; check it before relying on it):"


@functools.lru_cache(maxsize=4096)
def command_topics(command: str) -> tuple[str, ...]:
    """The file names and the program one command names (a sweep sees the same commands again
    and again: each is parsed once)."""
    named = []
    for topic in [program_of(command), *path_tokens(command)]:
        topic = topic.rsplit("/", 1)[-1] if topic else ""
        if topic and len(topic) <= TOPIC_CHARS:
            named.append(topic)
    return tuple(named)


def topics_of(signals: SaluteSignals, known: list[str] = ()) -> list[str]:
    """The file names and programs a unit's calls named, ``known`` ones (from its earlier
    reports: a report carries only the outcomes the detectors read) and then this report's,
    the newest last."""
    topics: dict[str, None] = dict.fromkeys(known)
    for outcome in signals.outcomes:
        for topic in command_topics(outcome.command or ""):
            topics.pop(topic, None)
            topics[topic] = None
    return list(topics)[-TOPICS_KEPT:]


def _concerns(learning: Learning) -> set[str]:
    names = {f.rsplit("/", 1)[-1] for f in learning.files} | set(learning.programs)
    return {name for name in names if len(name) <= TOPIC_CHARS}  # no longer topic is kept


def _remember(state: UnitState, digest: str) -> None:
    state.learned.append(digest)
    del state.learned[:-LEARNED_KEPT]


class Relay:
    """Which units work on what (an index of their domains and topics, so that finding the
    recipients of a learning does not look at every unit), and the queueing of learnings."""

    def __init__(self) -> None:
        self._units: dict[str, set[str]] = defaultdict(set)  # topic or "domain:<d>" -> units
        self._keys: dict[str, set[str]] = {}  # unit -> its keys in the index

    def index(self, state: UnitState) -> None:
        keys = set(state.topics) | ({f"domain:{state.domain}"} if state.domain else set()) \
            | ({f"role:{state.role_id}"} if state.role_id else set())
        old = self._keys.get(state.unit, set())
        for key in old - keys:
            self._units[key].discard(state.unit)
        for key in keys - old:
            self._units[key].add(state.unit)
        self._keys[state.unit] = keys

    def forget(self, unit: str) -> None:
        for key in self._keys.pop(unit, ()):
            self._units[key].discard(unit)

    def _candidates(self, learning: Learning, role_id: str) -> set[str]:
        keys = _concerns(learning) | ({f"domain:{learning.domain}"} if learning.domain else set())
        if learning.kind == "lesson" and not learning.domain:
            keys.add(f"role:{role_id}")  # a lesson names no files: it is for those doing the same job
        return set().union(*(self._units.get(key, ()) for key in keys))

    def take(self, source: UnitState, signals: SaluteSignals, states: dict[str, UnitState]) -> list[UnitState]:
        """Note the source's domain and topics, and queue its new learnings for the units that
        want them; the states changed (the source's included when it learned something new)."""
        topics = topics_of(signals, source.topics)
        if (source.domain, source.role_id, source.topics) != (signals.bst_domain, signals.role_id, topics):
            source.domain = signals.bst_domain
            source.role_id = signals.role_id
            source.topics = topics
            self.index(source)
        fresh = [l for l in signals.learnings if l.digest not in source.learned]
        if not fresh:
            return []
        changed = {source.unit: source}
        for learning in fresh:
            _remember(source, learning.digest)
        for learning in fresh:
            for unit in sorted(self._candidates(learning, signals.role_id) - {source.unit}):
                recipient = states.get(unit)
                if recipient is None or learning.digest in recipient.learned:
                    continue
                _remember(recipient, learning.digest)
                # what the message will say, no more: a learning's file lists are another unit's to make long
                recipient.relay_queue.append({"source": source.unit, "text": learning.text})
                del recipient.relay_queue[:-QUEUE_KEPT]
                changed[unit] = recipient
        return list(changed.values())


def due(state: UnitState, now: float, interval: float = RELAY_INTERVAL_SECONDS) -> Steering | None:
    """The message to send the unit now, if learnings wait for it and its rate limit allows."""
    if not state.relay_queue or (state.relayed_at is not None and now - state.relayed_at < interval):
        return None
    batch, state.relay_queue = state.relay_queue[:PER_MESSAGE], state.relay_queue[PER_MESSAGE:]
    state.relayed_at = now
    lines = [HEADING]
    sources: dict[str, None] = {}
    for item in batch:
        source = safe_text(str(item.get("source", "")), 64)
        text = safe_text(str(item.get("text", "")), MAX_LEARNING_CHARS)
        if source and text:
            sources[source] = None
            lines.append(f"- unit {source}: {text}")
    if len(lines) == 1:
        return None
    return Steering("inform", None, "hint", "\n".join(lines), 0, None, tuple(sources))
