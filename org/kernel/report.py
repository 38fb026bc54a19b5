"""The pack's own log: problems go to Python logging (Agent-Zero's console and docker log).

Problems that would repeat every turn (a broken file, malformed state of another layer)
are logged once per distinct message.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("a0org")
if not logger.handlers and not logging.getLogger().handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("[a0org] %(levelname)s %(message)s"))
    logger.addHandler(_handler)
    logger.setLevel(logging.INFO)

_MAX_REMEMBERED = 1024
_already_logged: dict[str, None] = {}


def warn_once(message: str) -> bool:
    """Log ``message`` unless the very same message was logged before. True when logged."""
    if message in _already_logged:
        return False
    if len(_already_logged) >= _MAX_REMEMBERED:
        _already_logged.pop(next(iter(_already_logged)))
    _already_logged[message] = None
    logger.warning(message)
    return True


def forget_logged() -> None:
    """Tests and the demo start from a clean slate."""
    _already_logged.clear()
