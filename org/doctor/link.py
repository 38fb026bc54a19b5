"""Who steers this Agent-Zero's agents: its own supervisor, or an XO on a shared volume."""

from __future__ import annotations

import logging
import os
import time

from org.doctor.report import OK, PROBLEM, WARNING, Check
from org.macrocosm.environment import ENV_VOLUME

_SHELL = "as this shell's environment says; Agent-Zero's own environment is what counts"


def _saying(call, said: list[str]):
    """``call()``, with what it logs (the pack's warnings) added to ``said`` too: doctor's report
    names the reason, in ``--json`` as well, not only on standard error."""
    from org.kernel.log import forget_logged, logger

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    handler = Collect(logging.WARNING)
    logger.addHandler(handler)
    forget_logged()  # said once per process elsewhere; here it is the answer
    try:
        return call()
    finally:
        logger.removeHandler(handler)


def check_supervision_mode() -> list[Check]:
    from org.macrocosm.unit import NO_VOLUME, XO_STEERS, UnitLink, mode_in_words, supervision_mode

    volume = os.environ.get(ENV_VOLUME)
    if not volume:
        return [Check("link", OK, f"${ENV_VOLUME}", f"not set: each agent is steered by its own supervisor ({_SHELL})")]
    said: list[str] = []
    link = _saying(UnitLink.from_env, said)  # logs why when the unit cannot link
    if link is None:
        why = "; ".join(said) or "the line above says why"
        return [Check("link", PROBLEM, f"${ENV_VOLUME}={volume}",
                      f"set, but this unit cannot link to it ({why}); its own supervisor steers",
                      "fix $A0ORG_UNIT or the keys as the reason says", {"mode": None, "reasons": said})]
    mode = supervision_mode(link, time.time())
    level = OK if mode == XO_STEERS else WARNING
    fix = (f"mount the shared volume at {volume}" if mode == NO_VOLUME else "start the XO on the volume (docs/macrocosm.md)")
    fix += f", or unset ${ENV_VOLUME} to leave each agent to its own supervisor"
    return [Check("link", level, f"${ENV_VOLUME}={volume}", f"{mode_in_words(link, mode)} ({_SHELL})", fix,
                  {"mode": mode, "unit": link.unit})]
