"""A learning: something one unit found out that other units may need (the learning relay).

A unit publishes its recent learnings in its SALUTE report (``signals.learnings``); the XO
relays each new one, as information, to the other units working in the same domain or on
the same files (docs/macrocosm.md#learning-relay).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import Contract

#: ``command_fix``: a command failed for a reason of the environment and another one did the
#: same job; ``moved_path``: a path did not exist and the file was found elsewhere;
#: ``lesson``: a lesson the internaliser wrote into the unit's knowledge store.
LearningKind = Literal["command_fix", "moved_path", "lesson"]
#: The longest text of a learning, and the most a report carries.
MAX_LEARNING_CHARS = 300
MAX_LEARNINGS = 8


class Learning(Contract):
    kind: LearningKind
    text: str = Field(min_length=1, max_length=MAX_LEARNING_CHARS, description="What was learned, in one sentence.")
    digest: str = Field(pattern=r"^[0-9a-f]{16}$", description="The learning's identity (its kind and substance), for deduplication.")
    turn: int | None = Field(None, ge=0, description="The unit's turn when it was learned (none for a lesson: learned over a task).")
    domain: str | None = Field(None, max_length=200, description="The domain it concerns, when the unit knows one.")
    files: list[str] = Field(default_factory=list, max_length=8, description="The paths it concerns.")
    programs: list[str] = Field(default_factory=list, max_length=4, description="The commands (programs) it concerns.")
