"""How full the model's context window is, computed the way each Agent-Zero era allows.

* tokens used: ``agent.get_data("ctx_window")["tokens"]``, set by Agent-Zero when it
  builds each prompt (a plain string before v0.8.2, counted here at ~4 characters a token);
* window size: ``agent.config.chat_model.ctx_length`` up to v0.9.8.x; from v0.9.9 the
  ``_model_config`` plugin's ``get_chat_model_config(agent)["ctx_length"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .log import warn_once
from .values import plain_number

_plugin_lookup: Callable[[Any], dict] | None | bool = False  # False: not looked for yet
#: No model has a window this large; a bigger count is garbage, not a measurement.
MAX_TOKENS = 10**12


@dataclass(frozen=True, slots=True)
class ContextFill:
    tokens: int
    window: int

    @property
    def fill(self) -> float:
        return self.tokens / self.window


def _plausible(number: Any) -> bool:
    return plain_number(number, 0, MAX_TOKENS)


def _tokens_used(agent: Any) -> int | None:
    window = agent.get_data("ctx_window") if hasattr(agent, "get_data") else None
    if isinstance(window, dict):
        tokens = window.get("tokens")
        if _plausible(tokens):
            return int(tokens)
        if tokens is not None:
            warn_once(f"agent.data['ctx_window'].tokens: not a plausible token count ({repr(tokens)[:40]}); context fill unknown",
                      key="agent.data['ctx_window'].tokens")
        return None
    if isinstance(window, str):
        return len(window) // 4
    return None


def reset_lookups() -> None:
    """Forget the plugin look-up (it is cached, failures included, to keep turns cheap)."""
    global _plugin_lookup
    _plugin_lookup = False


def _model_config_plugin() -> Callable[[Any], dict] | None:
    global _plugin_lookup
    if _plugin_lookup is False:
        try:
            from plugins._model_config.helpers.model_config import get_chat_model_config  # type: ignore

            _plugin_lookup = get_chat_model_config
        except Exception:
            _plugin_lookup = None
    return _plugin_lookup  # type: ignore[return-value]


def _chat_model_setting(agent: Any, key: str) -> Any:
    """A chat-model setting: ``agent.config.chat_model.<key>`` up to v0.9.8.x, else the
    ``_model_config`` plugin's ``get_chat_model_config(agent)[key]``."""
    try:
        value = getattr(getattr(getattr(agent, "config", None), "chat_model", None), key, None)
        if value is None:
            lookup = _model_config_plugin()
            if lookup is not None:
                settings = lookup(agent)
                value = settings.get(key) if isinstance(settings, dict) else None
        return value
    except Exception:  # a misbehaving config or plugin: the setting is unknown
        return None


def _window_size(agent: Any) -> int | None:
    size = _chat_model_setting(agent, "ctx_length")
    return int(size) if _plausible(size) and size >= 1 else None


def context_fill(agent: Any) -> ContextFill | None:
    tokens = _tokens_used(agent)
    if tokens is None:
        return None
    window = _window_size(agent)
    if window is None:
        return None
    return ContextFill(tokens, window)


def model_name(agent: Any) -> str | None:
    name = _chat_model_setting(agent, "name")
    return name[:200] if isinstance(name, str) and name else None
