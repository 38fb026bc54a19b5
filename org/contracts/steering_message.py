"""Steering message: one file the XO writes into a unit's inbox on the shared volume.

``units/<unit>/inbox/<seq>-<id>.json``. The unit applies it once (by ``id``), then
moves it to ``inbox/processed/``. ``signature`` is the XO's Ed25519 signature of the
message without it, by the key ``key_id`` names (see ``org.macrocosm.signing``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .common import AnomalyType, Contract, Identifier, NudgeSeverity, SchemaVersion, Timestamp

#: A message bigger than this is refused unread.
MAX_MESSAGE_BYTES = 16_000
#: The longest steering text a message carries.
MAX_TEXT_CHARS = 2000
MESSAGE_ID_PATTERN = r"^[0-9a-f]{32}$"


class SteeringMessage(Contract):
    schema_version: SchemaVersion = 1
    id: str = Field(pattern=MESSAGE_ID_PATTERN, description="Unique id; a unit applies each id at most once.")
    seq: int = Field(ge=1, description="Per-unit sequence number, in the order the XO sent them.")
    unit: Identifier = Field(description="The unit the message is for.")
    sender_role: Identifier = Field(description="Role id of the XO that sent it.")
    kind: Literal["steer", "pause", "inform"] = Field(
        description="steer: inject the text; pause: inject it and pause the agent; inform: add it as information (relayed learnings).")
    anomaly: AnomalyType | None = Field(None, description="What the steering is about; none for information.")
    sources: list[Identifier] = Field(default_factory=list, max_length=8, description="inform: the units the relayed learnings come from.")
    severity: NudgeSeverity = Field(description="Rises while the unit leaves nudges unanswered.")
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    nudge: int = Field(0, ge=0, description="How many nudges about this episode went before this one.")
    report_turn: int | None = Field(None, ge=0, description="The unit's turn in the report that was judged.")
    call: str | None = Field(None, pattern=r"^[0-9a-f]{1,64}$", description=(
        "loop steering about one call repeated with the same failure: that call's signature (its tool and canonical "
        "arguments, hashed, as in the report's outcomes). The unit's circuit breaker opens on it as on its own loop steering."))
    created_at: Timestamp
    expires_at: Timestamp = Field(description="After this a unit refuses the message: an old one cannot be replayed later.")
    epoch: int = Field(ge=0, description="The XO's start count; a unit takes (epoch, seq) only above the highest it has taken.")
    key_id: str | None = Field(None, pattern=r"^[0-9a-f]{16}$", description="Id of the XO key that signed it.")
    signature: str | None = Field(None, pattern=r"^[0-9a-f]{128}$", description="Ed25519 signature by the XO's key, hex.")

    @model_validator(mode="after")
    def _steering_names_its_anomaly(self) -> "SteeringMessage":
        if self.kind != "inform" and self.anomaly is None:
            raise ValueError(f"a {self.kind} message names its anomaly")
        return self
