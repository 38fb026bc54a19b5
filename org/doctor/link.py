"""Who steers this Agent-Zero's agents: its own supervisor, or an XO on a shared volume."""

from __future__ import annotations

import os
import time

from org.doctor.report import OK, PROBLEM, WARNING, Check
from org.macrocosm.environment import ENV_VOLUME

_SHELL = "as this shell's environment says; Agent-Zero's own environment is what counts"


def check_supervision_mode() -> list[Check]:
    from org.macrocosm.unit import NO_VOLUME, XO_STEERS, UnitLink, mode_in_words, supervision_mode

    volume = os.environ.get(ENV_VOLUME)
    if not volume:
        return [Check("link", OK, f"${ENV_VOLUME}", f"not set: each agent is steered by its own supervisor ({_SHELL})")]
    link = UnitLink.from_env()  # logs why when the unit cannot link
    if link is None:
        return [Check("link", PROBLEM, f"${ENV_VOLUME}={volume}",
                      "set, but this unit cannot link to it (the line above says why); its own supervisor steers",
                      "fix $A0ORG_UNIT or the organization key as the line above says")]
    mode = supervision_mode(link, time.time())
    level = OK if mode == XO_STEERS else WARNING
    fix = (f"mount the shared volume at {volume}" if mode == NO_VOLUME else "start the XO on the volume (docs/macrocosm.md)")
    fix += f", or unset ${ENV_VOLUME} to leave each agent to its own supervisor"
    return [Check("link", level, f"${ENV_VOLUME}={volume}", f"{mode_in_words(link, mode)} ({_SHELL})", fix,
                  {"mode": mode, "unit": link.unit})]
