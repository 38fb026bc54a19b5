"""SALUTE report: status, activity, location, unit, time, environment."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import AnomalyType, Contract, Health, Identifier, PaceLevel, SchemaVersion, Timestamp

SALUTE_SCHEMA_VERSION = 1


class SaluteStatus(Contract):
    state: Literal["idle", "active", "waiting", "error_recovery", "escalating", "complete", "aborted"]
    pace_level: PaceLevel
    health: Health
    health_source: Literal["dispatcher", "supervisor"] = "dispatcher"
    progress: float | None = Field(None, ge=0, le=1)


class SaluteActivity(Contract):
    current_task: str = "idle"
    bst_domain: str | None = None
    bst_confidence: float | None = None
    htn_plan: str | None = None
    htn_step: str | None = None
    current_tool: str | None = None
    progress_source: Literal["htn", "pack"] = "pack"


class SaluteLocation(Contract):
    working_directory: str | None = None


class SaluteUnit(Contract):
    role_id: Identifier
    role_name: str
    role_type: Literal["commander", "executive", "specialist"]
    reports_to: str
    organization: Identifier
    agent_number: int = 0
    agent_name: str | None = None
    context_id: str | None = None


class SaluteTime(Contract):
    timestamp: Timestamp
    turns_elapsed: int = Field(ge=0)
    turns_since_progress: int = Field(ge=0)


class SaluteEnvironment(Contract):
    model: str | None = None
    context_fill_pct: float | None = Field(None, ge=0)
    context_tokens_used: int | None = Field(None, ge=0)
    context_tokens_max: int | None = Field(None, ge=0)
    tool_failures_consecutive: int = Field(0, ge=0)
    tool_failures_total: int = Field(0, ge=0)


class SupervisorAssessment(Contract):
    """Added by the supervisor when its view of health differs from the dispatcher's."""

    turn: int = Field(ge=0)
    health: Health
    anomalies: list[AnomalyType] = Field(default_factory=list)
    assessed_at: Timestamp


class SaluteReport(Contract):
    """``reports/<role_id>_latest.json``."""

    schema_version: SchemaVersion = SALUTE_SCHEMA_VERSION
    reason: Literal["interval", "pace_change", "first", "supervisor"] = "interval"
    status: SaluteStatus
    activity: SaluteActivity
    location: SaluteLocation = Field(default_factory=SaluteLocation)
    unit: SaluteUnit
    time: SaluteTime
    environment: SaluteEnvironment
    supervisor: SupervisorAssessment | None = None
