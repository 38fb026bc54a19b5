"""The process's environment changed for a while, then given back as it was."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def environment(changes: Mapping[str, str | None]) -> Iterator[None]:
    """Set each variable of ``changes`` (None: unset it) until the block ends; then every one
    of them is as it was before, set or unset."""
    previous = {name: os.environ.get(name) for name in changes}
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
