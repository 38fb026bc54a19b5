"""``a0org status``: one row per unit on the volume, as a table or as JSON for scripts."""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..volume import VolumeLayout
from .rows import open_volume, pipe_closed, status_lines, status_rows

#: The version of ``status --json``'s document. Documented in docs/macrocosm.md.
STATUS_JSON_VERSION = 1


def status_document(layout: VolumeLayout, now: float, home: str | Path | None = None) -> dict[str, Any]:
    return {
        "schema_version": STATUS_JSON_VERSION,
        "volume": str(layout.root),
        "generated_at": datetime.fromtimestamp(now, timezone.utc).isoformat(),
        "units": status_rows(layout, now, home=home),
    }


def main(volume: str | Path, as_json: bool = False, home: str | Path | None = None) -> int:
    """Print the status of every unit once; 2 when the volume is not there."""
    layout = open_volume(volume)
    if layout is None:
        return 2
    now = time.time()
    try:
        if as_json:
            sys.stdout.write(json.dumps(status_document(layout, now, home), indent=2) + "\n")
        else:
            sys.stdout.write("\n".join(status_lines(layout, now, home=home)) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        return pipe_closed()
    return 0
