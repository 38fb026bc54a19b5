"""The model behind the LLM-backed supervisors: config, chat client and usage ledger.

``load_config`` reads ``<organizations>/supervisors.yaml``; a :class:`ChatClient` makes
one supervisor run's calls to an OpenAI-compatible endpoint (OpenRouter by default) and
records them in the :class:`UsageLedger`. See docs/models.md.
"""

from org.contracts.supervisors import SUPERVISOR_NAMES, ModelConfig, SupervisorsConfig

from .budget import LedgerError, Usage, UsageBreakdown, UsageLedger, utc_day
from .client import (
    ChatClient,
    ChatResult,
    ModelOutputInvalid,
    ModelUnavailable,
    deadline_after,
    parse_output,
)
from .config import CONFIG_NAME, config_path, load_config, read_config

__all__ = [
    "CONFIG_NAME",
    "SUPERVISOR_NAMES",
    "ChatClient",
    "ChatResult",
    "LedgerError",
    "ModelConfig",
    "ModelOutputInvalid",
    "ModelUnavailable",
    "SupervisorsConfig",
    "Usage",
    "UsageBreakdown",
    "UsageLedger",
    "config_path",
    "deadline_after",
    "load_config",
    "parse_output",
    "read_config",
    "utc_day",
]
