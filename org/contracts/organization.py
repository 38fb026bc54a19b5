"""Organization (a set of roles and who reports to whom) and the active-organization pointer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from .common import IDENTIFIER_PATTERN, Contract, Identifier, Timestamp


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

    schema_version: Literal[1] = 1
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

    @field_validator("default_role")
    @classmethod
    def _default_role_in_hierarchy(cls, role: str, info: ValidationInfo) -> str:
        known = _known_roles(info)
        if known is not None and role not in known:
            raise ValueError(f"'{role}' is not in the hierarchy")
        return role

    @field_validator("domain_routing")
    @classmethod
    def _routes_to_known_roles(cls, routing: dict[str, list[str]], info: ValidationInfo) -> dict[str, list[str]]:
        known = _known_roles(info)
        for domain, roles in routing.items():
            for role in roles:
                if known is not None and role not in known:
                    raise ValueError(f"'{domain}' routes to '{role}', which is not in the hierarchy")
        return routing

    def role_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for role_id, node in self.hierarchy.items():
            seen.setdefault(role_id, None)
            for sub in node.subordinates:
                seen.setdefault(sub, None)
        return list(seen)


class ActiveOrganization(Contract):
    """``active.json``: which organization is active. Its absence switches the pack off."""

    schema_version: Literal[1] = 1
    org_id: Identifier
    activated_at: Timestamp | None = None
    activated_by: str | None = None
