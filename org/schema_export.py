"""Generate ``schemas/*.schema.json`` from the pydantic contracts."""

from __future__ import annotations

import json
from pathlib import Path

from org.contracts import SCHEMAS


def schema_documents() -> dict[str, str]:
    """File name -> JSON text, for every contract."""
    out = {}
    for stem, model in SCHEMAS.items():
        schema = model.model_json_schema()
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
