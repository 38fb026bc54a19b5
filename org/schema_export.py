"""Generate ``schemas/*.schema.json`` from the pydantic contracts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The part of a role that a layer of the cascade gives (org/kernel/cascade.py): a role file
#: that ``extends`` another, ``role_defaults``, and the entries of ``overrides.yaml``.
ROLE_LAYER = "role_layer"


def layer_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with nothing required and null allowed everywhere (null removes an inherited entry)."""
    if isinstance(schema, list):
        return [layer_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: layer_schema(value) for key, value in schema.items() if key != "required"}
    for name, prop in (out.get("properties") or {}).items():
        out["properties"][name] = {"anyOf": [prop, {"type": "null"}]}
    return out


def schema_documents() -> dict[str, str]:
    """File name -> JSON text, for every contract, and the role layer."""
    out = {}
    from org.contracts import SCHEMAS

    schemas = {stem: model.model_json_schema() for stem, model in SCHEMAS.items()}
    layer = layer_schema(schemas["role_profile"])
    layer["description"] = "Part of a role, merged over what lies below it: " + layer.get("description", "")
    schemas[ROLE_LAYER] = layer
    for stem, schema in schemas.items():
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{stem}.schema.json", **schema}
        out[f"{stem}.schema.json"] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def write_schemas(target: Path) -> list[Path]:
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in schema_documents().items():
        path = target / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
