"""How full the model's context window is, computed the way each Agent-Zero era allows.

* tokens used: ``agent.get_data("ctx_window")["tokens"]``, set by Agent-Zero when it
  builds each prompt (a plain string before v0.8.2, counted here at ~4 characters a token);
* window size: ``agent.config.chat_model.ctx_length`` up to v0.9.8.x; from v0.9.9 the
  ``_model_config`` plugin's ``get_chat_model_config(agent)["ctx_length"]``.

The plugin finds, reads and parses its configuration files at each call (about 0.5 ms in a
real v1.7, where the window and the model's name were asked for four times a turn): its answer
is kept per agent for :data:`SETTINGS_KEPT_SECONDS`. A setting the user changes reaches the
context's fill within that time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from .log import warn_once
from .values import plain_number

#: No model has a window this large; a bigger count is garbage, not a measurement.
MAX_TOKENS = 10**12

_plugin_lookup: Callable[[Any], dict] | None | bool = False  # False: not looked for yet
#: how long the plugin's answer is kept, for how many chats and agents, and what is kept of it
SETTINGS_KEPT_SECONDS = 10.0
KEPT_AGENTS = 64
SETTINGS_READ = ("ctx_length", "name")
#: (chat id, agent number) -> (when read, the settings read)
_kept_settings: dict[tuple[str, int], tuple[float, dict]] = {}


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
    """Forget the plugin look-up (it is cached, failures included, to keep turns cheap) and the
    settings it gave."""
    global _plugin_lookup
    _plugin_lookup = False
    _kept_settings.clear()


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
            settings = _plugin_settings(agent)
            value = settings.get(key) if settings is not None else None
        return value
    except Exception:  # a misbehaving config or plugin: the setting is unknown
        return None


def _plugin_settings(agent: Any) -> dict | None:
    """The plugin's chat-model settings for ``agent``, as kept when read in the last seconds."""
    lookup = _model_config_plugin()
    if lookup is None:
        return None
    chat, number = getattr(getattr(agent, "context", None), "id", None), getattr(agent, "number", None)
    key = (chat, number) if isinstance(chat, str) and type(number) is int else None  # else read each time
    now = time.monotonic()
    kept = _kept_settings.get(key) if key is not None else None
    if kept is not None and 0 <= now - kept[0] < SETTINGS_KEPT_SECONDS:
        return kept[1]
    answer = lookup(agent)
    if not isinstance(answer, dict):
        return None
    settings = {name: answer.get(name) for name in SETTINGS_READ}
    if key is not None:
        if len(_kept_settings) >= KEPT_AGENTS:
            _kept_settings.clear()
        _kept_settings[key] = (now, settings)
    return settings


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
