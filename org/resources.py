"""Where the pack's own files are: hook files, roles, organization templates, schemas.

From a source checkout they sit next to the ``org`` package; from an installed wheel
they are under ``<prefix>/share/a0-org-kernel``. ``$A0ORG_PACK_DIR`` overrides both.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

ENV_PACK_DIR = "A0ORG_PACK_DIR"
HOOK_POINTS = (
    "monologue_start", "message_loop_prompts_before", "message_loop_prompts_after", "before_main_llm_call",
    "tool_execute_before", "tool_execute_after", "message_loop_end", "monologue_end",
)


def _candidates() -> list[Path]:
    found = []
    configured = os.environ.get(ENV_PACK_DIR)
    if configured:
        found.append(Path(configured))
    found.append(Path(__file__).resolve().parent.parent)
    for prefix in {sys.prefix, sysconfig.get_paths().get("data", sys.prefix)}:
        found.append(Path(prefix) / "share" / "a0-org-kernel")
    return found


def pack_root() -> Path:
    for candidate in _candidates():
        if (candidate / "extensions" / "message_loop_end").is_dir() and (candidate / "roles").is_dir():
            return candidate
    raise FileNotFoundError(
        "cannot find the pack's extensions/ and roles/ folders; set A0ORG_PACK_DIR to the pack's directory"
    )


def extensions_dir() -> Path:
    return pack_root() / "extensions"


def roles_dir() -> Path:
    return pack_root() / "roles"


def organizations_templates_dir() -> Path:
    return roles_dir() / "organizations"

