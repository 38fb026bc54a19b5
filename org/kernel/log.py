"""The pack's own log: problems go to Python logging (Agent-Zero's console and docker log).

Problems that would repeat every turn (a broken file, malformed state of another layer)
are logged once per distinct message.
"""

from __future__ import annotations

import logging
import threading

from org.lazy_patterns import lazy_pattern

from .bounded import drop_oldest

#: Characters a terminal or a log reader acts on rather than shows: line breaks (a forged log
#: line), escape sequences, direction overrides. A message may quote a name from a shared
#: volume or a hostile file; every line the pack logs stays one line, shown as it is.
_CONTROL = lazy_pattern("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` as one line shown as it is: each control character as ``\\xNN`` or ``\\uNNNN``."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100 else f"\\u{ord(m.group(0)):04x}", text)


class _OneLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _CONTROL.search(message) is not None:
            record.msg, record.args = printable(message), ()
        return True


logger = logging.getLogger("a0org")
logger.addFilter(_OneLine())
if not logger.handlers and not logging.getLogger().handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("[a0org] %(levelname)s %(message)s"))
    logger.addHandler(_handler)
    logger.setLevel(logging.INFO)

_MAX_REMEMBERED = 1024
_already_logged: dict[str, None] = {}
#: the LLM-backed supervisors log from their own thread
_lock = threading.Lock()


def warn_once(message: str, key: str | None = None) -> bool:
    """Log ``message`` unless it (or another with the same ``key``) was logged before.

    Messages that quote a changing value pass a stable ``key`` (the field), so a field
    that is wrong in a new way every turn is still reported once. True when logged.
    """
    key = message if key is None else key
    with _lock:
        if key in _already_logged:
            return False
        _already_logged[key] = None
        drop_oldest(_already_logged, _MAX_REMEMBERED)
    logger.warning(message)
    return True


def forget_logged_about(prefix: str) -> None:
    """A file that is fine again: its next problem is news and gets logged."""
    with _lock:
        for key in [k for k in _already_logged if k.startswith(prefix)]:
            del _already_logged[key]


def forget_logged() -> None:
    """Tests and the demo start from a clean slate."""
    with _lock:
        _already_logged.clear()
