"""One pydantic model per contract. ``schemas/`` is generated from :data:`SCHEMAS`.

Each name is imported from its module on first use (PEP 562), so a command that needs one
contract does not build every model at start: ``from org.contracts import SaluteReport`` loads
``salute`` and what it uses, nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from org.lazy_exports import lazy_exports

#: public name -> the module of this package that defines it
_HOMES: dict[str, str] = {
    "SupervisionEvent": ".event",
    "Finding": ".finding",
    "Directive": ".knowledge",
    "DirectiveQueueFile": ".knowledge",
    "KnowledgeDocument": ".knowledge",
    "ReviewItem": ".knowledge",
    "ActiveOrganization": ".organization",
    "Organization": ".organization",
    "OrganizationOverrides": ".organization",
    "Doctrine": ".role",
    "PacePlan": ".role",
    "RoleProfile": ".role",
    "SaluteReport": ".salute",
    "SteeringTemplates": ".steering",
    "SteeringMessage": ".steering_message",
    "CodeStyleOutput": ".supervisor_outputs",
    "DesignOutput": ".supervisor_outputs",
    "InternaliserOutput": ".supervisor_outputs",
    "SupervisorAnswers": ".supervisor_outputs",
    "SupervisorRun": ".supervisor_outputs",
    "SupervisorsState": ".supervisor_outputs",
    "TaskDigest": ".supervisor_outputs",
    "SupervisorsConfig": ".supervisors",
    "TraceHeader": ".trace",
    "TraceTurn": ".trace",
}

#: schema file stem -> model name. ``a0org schemas`` writes ``schemas/<stem>.schema.json``.
_SCHEMA_MODELS: dict[str, str] = {
    "role_profile": "RoleProfile",
    "organization": "Organization",
    "active_organization": "ActiveOrganization",
    "organization_overrides": "OrganizationOverrides",
    "salute_report": "SaluteReport",
    "trace_header": "TraceHeader",
    "trace_turn": "TraceTurn",
    "finding": "Finding",
    "supervision_event": "SupervisionEvent",
    "steering": "SteeringTemplates",
    "steering_message": "SteeringMessage",
    "knowledge_document": "KnowledgeDocument",
    "directive": "Directive",
    "directive_queue": "DirectiveQueueFile",
    "review_item": "ReviewItem",
    "supervisors_config": "SupervisorsConfig",
    "code_style_output": "CodeStyleOutput",
    "design_output": "DesignOutput",
    "internaliser_output": "InternaliserOutput",
    "supervisor_run": "SupervisorRun",
    "supervisor_answers": "SupervisorAnswers",
    "supervisors_state": "SupervisorsState",
    "task_digest": "TaskDigest",
}

__all__ = ["SCHEMAS", "schema_model", *sorted(_HOMES)]


_export, __dir__ = lazy_exports(__name__, _HOMES)


def schema_model(stem: str) -> type | None:
    """The model behind ``schemas/<stem>.schema.json`` (None for an unknown stem), loading that one alone."""
    return _export(_SCHEMA_MODELS[stem]) if stem in _SCHEMA_MODELS else None


def __getattr__(name: str) -> Any:
    if name == "SCHEMAS":
        globals()["SCHEMAS"] = {stem: _export(model) for stem, model in _SCHEMA_MODELS.items()}
        return globals()["SCHEMAS"]
    return _export(name)


if TYPE_CHECKING:
    from .event import SupervisionEvent
    from .finding import Finding
    from .knowledge import Directive, DirectiveQueueFile, KnowledgeDocument, ReviewItem
    from .organization import ActiveOrganization, Organization, OrganizationOverrides
    from .role import Doctrine, PacePlan, RoleProfile
    from .salute import SaluteReport
    from .steering import SteeringTemplates
    from .steering_message import SteeringMessage
    from .supervisor_outputs import (
        CodeStyleOutput,
        DesignOutput,
        InternaliserOutput,
        SupervisorAnswers,
        SupervisorRun,
        SupervisorsState,
        TaskDigest,
    )
    from .supervisors import SupervisorsConfig
    from .trace import TraceHeader, TraceTurn

    SCHEMAS: dict[str, type]
