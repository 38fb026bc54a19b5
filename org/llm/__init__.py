"""The model behind the LLM-backed supervisors: config, chat client and usage ledger.

``load_config`` reads ``<organizations>/supervisors.yaml``; a :class:`ChatClient` makes
one supervisor run's calls to an OpenAI-compatible endpoint (OpenRouter by default) and
records them in the :class:`UsageLedger`. The HTTP side (retries, deadline) is in
``transport``, the JSON-answer contract in ``answer``. See docs/models.md.
"""

from typing import TYPE_CHECKING

from org.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("SUPERVISOR_NAMES", "ModelConfig", "SupervisorsConfig"), "org.contracts.supervisors"),
    **dict.fromkeys(("ModelOutputInvalid", "parse_output"), ".answer"),
    **dict.fromkeys(("LedgerError", "Usage", "UsageBreakdown", "UsageLedger", "utc_day"), ".budget"),
    **dict.fromkeys(("ChatClient", "ChatResult", "deadline_after"), ".client"),
    **dict.fromkeys(("CONFIG_NAME", "config_path", "load_config", "read_config"), ".config"),
    "ModelUnavailable": ".transport",
})

if TYPE_CHECKING:
    from org.contracts.supervisors import SUPERVISOR_NAMES, ModelConfig, SupervisorsConfig

    from .answer import ModelOutputInvalid, parse_output
    from .budget import LedgerError, Usage, UsageBreakdown, UsageLedger, utc_day
    from .client import ChatClient, ChatResult, deadline_after
    from .config import CONFIG_NAME, config_path, load_config, read_config
    from .transport import ModelUnavailable

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
