"""``a0org watch``: the status table, live, redrawn in place on a terminal."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import TextIO

from .rows import CUT, FileCache, open_volume, pipe_closed, status_lines

_CLEAR_LINE = "\x1b[K"
_HOME = "\x1b[H"
_CLEAR_BELOW = "\x1b[J"
_CLEAR_SCREEN = "\x1b[2J"
_HIDE_CURSOR = "\x1b[?25l"
_SHOW_CURSOR = "\x1b[?25h"


def frame(lines: list[str], tty: bool) -> str:
    """One redraw: on a terminal, over the previous one from the top left, each line
    cleared to its end and everything below cleared after, in a single write, so the
    screen never shows a blank moment; elsewhere, the table and a blank line."""
    if not tty:
        return "\n".join(lines) + "\n\n"
    return _HOME + "".join(line + _CLEAR_LINE + "\n" for line in lines) + _CLEAR_BELOW


def fit(lines: list[str], columns: int, rows: int) -> list[str]:
    """Lines cut to the terminal, keeping the last one (the footer): a frame that wrapped
    or scrolled could no longer be drawn over from the top."""
    limit = max(rows - 1, 3)  # the cursor rests on the line after the frame
    if len(lines) > limit:
        kept = lines[: limit - 2]
        lines = kept + [f"... {len(lines) - 1 - len(kept)} more lines; a taller terminal shows them", lines[-1]]
    width = max(columns - 1, 20)  # a line filling the last column would wrap on some terminals
    return [line if len(line) <= width else line[: width - len(CUT)] + CUT for line in lines]


def _terminal_size(out: TextIO) -> tuple[int, int]:
    """(columns, lines); a terminal that reports no size (0 x 0) is taken as 80 x 24."""
    try:
        size = os.get_terminal_size(out.fileno())
    except (OSError, ValueError):
        size = shutil.get_terminal_size()
    return (size.columns or 80, size.lines or 24)


def main(volume: str | Path, interval: float = 1.0, out: TextIO | None = None, frames: int | None = None,
         home: str | Path | None = None) -> int:
    """Redraw the table every ``interval`` seconds until Ctrl-C, or after ``frames`` tables."""
    layout = open_volume(volume)
    if layout is None:
        return 2
    out = out or sys.stdout
    tty = out.isatty()
    interval = max(float(interval), 0.05)
    cache = FileCache()
    drawn = 0
    if tty:
        out.write(_HIDE_CURSOR + _HOME + _CLEAR_SCREEN)
    try:
        while frames is None or drawn < frames:
            if tty:
                columns, height = _terminal_size(out)
                # summary, blank (or hidden columns) line, header, "... more", footer and the cursor's line
                lines = status_lines(layout, time.time(), cache, max_rows=max(height - 6, 1), width=max(columns - 1, 20),
                                     problems_first=True, home=home)
                lines = fit(lines + [f"every {interval:g}s; Ctrl-C to stop"], columns, height)
            else:
                lines = status_lines(layout, time.time(), cache, problems_first=True, home=home)
            out.write(frame(lines, tty))
            out.flush()
            drawn += 1
            if frames is None or drawn < frames:
                time.sleep(interval)
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        return pipe_closed()
    finally:
        if tty:
            try:
                out.write(_SHOW_CURSOR)
                out.flush()
            except OSError:  # the terminal is gone; nothing to give the cursor back to
                pass
    return 0
