"""A command loads what it uses and no more: every process pays for its imports at start.

Each check runs in a new interpreter (the test process has imported everything long ago)."""

from __future__ import annotations

import json
import subprocess
import sys

from pack_commands import ROOT

_MODULES_AFTER = """
import json, sys
from org.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_after(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _MODULES_AFTER, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


#: what every command loads to build its parser: the feature packages' argument definitions
PARSERS = {"org.macrocosm.cli", "org.macrocosm.environment", "org.knowledge.cli", "org.llm_supervisors", "org.llm_supervisors.cli",
           "org.doctor.cli", "org.contracts.vocabulary"}


def beyond_parsers(loaded: set[str], *prefixes: str) -> set[str]:
    return {m for m in loaded if m.startswith(prefixes)} - PARSERS


def test_help_loads_no_contract_macrocosm_or_model_client():
    loaded = modules_after("--help")
    assert "pydantic" not in loaded and "yaml" not in loaded
    assert not beyond_parsers(loaded, "org.macrocosm.", "org.llm", "org.knowledge.", "org.contracts.", "org.kernel", "org.supervisor")


def test_validate_loads_the_role_contracts_and_nothing_of_the_macrocosm_or_the_model_client():
    loaded = modules_after("validate", "roles/codegen.yaml")
    assert "org.contracts.role" in loaded
    assert not beyond_parsers(loaded, "org.macrocosm.", "org.llm", "org.knowledge.", "org.supervisor")
    assert not {"org.contracts.salute", "org.contracts.supervisor_outputs", "org.contracts.knowledge",
                "org.contracts.supervisors", "org.contracts.event"} & loaded
