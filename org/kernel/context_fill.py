"""How full the model's context window is, computed the way each Agent-Zero era allows.

* tokens used: ``agent.get_data("ctx_window")["tokens"]``, set by Agent-Zero when it
  builds each prompt (a plain string before v0.8.2, counted here at ~4 characters a token);
* window size: ``agent.config.chat_model.ctx_length`` up to v0.9.8.x; from v0.9.9 the
  ``_model_config`` plugin's ``get_chat_model_config(agent)["ctx_length"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

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


def _window_size(agent: Any) -> int | None:
    chat_model = getattr(getattr(agent, "config", None), "chat_model", None)
    size = getattr(chat_model, "ctx_length", None)
    if size is None:
        lookup = _model_config_plugin()
        if lookup is not None:
            try:
                size = (lookup(agent) or {}).get("ctx_length")
            except Exception:
                size = None
    if _plausible(size) and size >= 1:
        return int(size)
    return None


def context_fill(agent: Any) -> ContextFill | None:
    tokens = _tokens_used(agent)
    if tokens is None:
        return None
    window = _window_size(agent)
    if window is None:
        return None
    return ContextFill(tokens, window)


def model_name(agent: Any) -> str | None:
    chat_model = getattr(getattr(agent, "config", None), "chat_model", None)
    name = getattr(chat_model, "name", None)
    if name is None:
        lookup = _model_config_plugin()
        if lookup is not None:
            try:
                name = (lookup(agent) or {}).get("name")
            except Exception:
                name = None
    return str(name) if name else None
