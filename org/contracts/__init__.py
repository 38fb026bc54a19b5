"""One pydantic model per contract. ``schemas/`` is generated from :data:`SCHEMAS`."""

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

#: schema file stem -> model. ``a0org schemas`` writes ``schemas/<stem>.schema.json``.
SCHEMAS = {
    "role_profile": RoleProfile,
    "organization": Organization,
    "active_organization": ActiveOrganization,
    "organization_overrides": OrganizationOverrides,
    "salute_report": SaluteReport,
    "trace_header": TraceHeader,
    "trace_turn": TraceTurn,
    "finding": Finding,
    "steering": SteeringTemplates,
    "steering_message": SteeringMessage,
    "knowledge_document": KnowledgeDocument,
    "directive": Directive,
    "directive_queue": DirectiveQueueFile,
    "review_item": ReviewItem,
    "supervisors_config": SupervisorsConfig,
    "code_style_output": CodeStyleOutput,
    "design_output": DesignOutput,
    "internaliser_output": InternaliserOutput,
    "supervisor_run": SupervisorRun,
    "supervisor_answers": SupervisorAnswers,
    "supervisors_state": SupervisorsState,
    "task_digest": TaskDigest,
}

__all__ = [
    "SCHEMAS",
    "ActiveOrganization",
    "CodeStyleOutput",
    "DesignOutput",
    "Directive",
    "DirectiveQueueFile",
    "Doctrine",
    "OrganizationOverrides",
    "Finding",
    "InternaliserOutput",
    "KnowledgeDocument",
    "Organization",
    "PacePlan",
    "ReviewItem",
    "RoleProfile",
    "SaluteReport",
    "SteeringMessage",
    "SteeringTemplates",
    "SupervisorAnswers",
    "SupervisorRun",
    "SupervisorsState",
    "SupervisorsConfig",
    "TaskDigest",
    "TraceHeader",
    "TraceTurn",
]
