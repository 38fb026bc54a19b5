"""One pydantic model per contract. ``schemas/`` is generated from :data:`SCHEMAS`."""

from .finding import Finding
from .organization import ActiveOrganization, Organization
from .role import Doctrine, PacePlan, RoleProfile
from .salute import SaluteReport
from .steering import SteeringTemplates
from .steering_message import SteeringMessage
from .trace import TraceHeader, TraceTurn

#: schema file stem -> model. ``a0org schemas`` writes ``schemas/<stem>.schema.json``.
SCHEMAS = {
    "role_profile": RoleProfile,
    "organization": Organization,
    "active_organization": ActiveOrganization,
    "salute_report": SaluteReport,
    "trace_header": TraceHeader,
    "trace_turn": TraceTurn,
    "finding": Finding,
    "steering": SteeringTemplates,
    "steering_message": SteeringMessage,
}

__all__ = [
    "SCHEMAS",
    "ActiveOrganization",
    "Doctrine",
    "Finding",
    "Organization",
    "PacePlan",
    "RoleProfile",
    "SaluteReport",
    "SteeringMessage",
    "SteeringTemplates",
    "TraceHeader",
    "TraceTurn",
]
