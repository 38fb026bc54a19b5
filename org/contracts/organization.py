"""Organization (a set of roles and who reports to whom) and the active-organization pointer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from .common import IDENTIFIER_PATTERN, Contract, Identifier, SchemaVersion, Timestamp


def _known_roles(info: ValidationInfo) -> set[str] | None:
    """Every role named in an already validated hierarchy (None when it did not validate)."""
    hierarchy = info.data.get("hierarchy")
    if hierarchy is None:
        return None
    known = set(hierarchy)
    for node in hierarchy.values():
        known.update(node.subordinates)
    return known


class Mission(Contract):
    objective: str = ""
    success_criteria: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)


class HierarchyNode(Contract):
    subordinates: list[Identifier] = Field(default_factory=list)


class Organization(Contract):
    """An organization template: ``<org_id>.yaml`` in the organizations folder."""

    schema_version: SchemaVersion = 1
    org_id: Identifier
    org_name: str = Field(min_length=1)
    description: str = ""
    mission: Mission = Field(default_factory=Mission)
    mode: Literal["microcosm", "macrocosm"] = "microcosm"
    # hierarchy comes before the fields checked against it
    hierarchy: dict[Identifier, HierarchyNode] = Field(
        min_length=1, json_schema_extra={"propertyNames": {"pattern": IDENTIFIER_PATTERN}}
    )
    default_role: Identifier = Field(description="Role used when no BST domain routes to another.")
    domain_routing: dict[str, list[Identifier]] = Field(
        default_factory=dict, description="BST domain -> roles to try, in order."
    )
    role_defaults: dict[str, Any] = Field(default_factory=dict, description=(
        "Part of a role (e.g. doctrine values) every role of this organization starts from; "
        "each role's own file wins over it (see role_layer.schema.json)."))

    @field_validator("default_role")
    @classmethod
    def _default_role_in_hierarchy(cls, role: str, info: ValidationInfo) -> str:
        known = _known_roles(info)
        if known is not None and role not in known:
            raise ValueError(f"'{role}' is not in the hierarchy")
        return role

    @model_validator(mode="after")
    def _routes_to_known_roles(self) -> "Organization":
        """Each route names a role of the hierarchy; a bad one is reported at its own entry."""
        known = set(self.role_ids())
        errors = [
            InitErrorDetails(
                type=PydanticCustomError(
                    "unknown_role", "'{domain}' routes to '{role}', which is not in the hierarchy", {"domain": domain, "role": role}
                ),
                loc=("domain_routing", domain, index),
                input=role,
            )
            for domain, roles in self.domain_routing.items()
            for index, role in enumerate(roles)
            if role not in known
        ]
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self

    def role_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for role_id, node in self.hierarchy.items():
            seen.setdefault(role_id, None)
            for sub in node.subordinates:
                seen.setdefault(sub, None)
        return list(seen)


class ActiveOrganization(Contract):
    """``active.json``: which organization is active. Its absence switches the pack off."""

    schema_version: SchemaVersion = 1
    org_id: Identifier
    activated_at: Timestamp | None = None
    activated_by: str | None = None


class OrganizationOverrides(Contract):
    """``overrides.yaml``: the user's changes to the shipped roles, kept out of the files the
    installer updates; also ``projects/<project>/overrides.yaml`` for one Agent-Zero project."""

    schema_version: SchemaVersion = 1
    every_role: dict[str, Any] = Field(default_factory=dict, description="Part of a role merged into every role.")
    roles: dict[Identifier, dict[str, Any]] = Field(
        default_factory=dict, description="role id -> part of that role merged into it (after every_role).",
        json_schema_extra={"propertyNames": {"pattern": IDENTIFIER_PATTERN}})
