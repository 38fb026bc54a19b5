"""Organization (a set of roles and who reports to whom) and the active-organization pointer."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from .common import Contract, Identifier


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
    default_role: Identifier = Field(description="Role used when no BST domain routes to another.")
    hierarchy: dict[Identifier, HierarchyNode] = Field(min_length=1)
    domain_routing: dict[str, list[Identifier]] = Field(
        default_factory=dict, description="BST domain -> roles to try, in order."
    )

    @model_validator(mode="after")
    def _roles_are_in_hierarchy(self) -> "Organization":
        known = set(self.hierarchy)
        for node in self.hierarchy.values():
            known.update(node.subordinates)
        if self.default_role not in known:
            raise ValueError(f"default_role '{self.default_role}' is not in the hierarchy")
        for domain, roles in self.domain_routing.items():
            for role in roles:
                if role not in known:
                    raise ValueError(f"domain_routing['{domain}'] names '{role}', which is not in the hierarchy")
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

    schema_version: Literal[1] = 1
    org_id: Identifier
    activated_at: datetime | None = None
    activated_by: str | None = None
