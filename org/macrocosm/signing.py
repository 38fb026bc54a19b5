"""Only the XO may steer: steering files signed with the organization key.

The key comes from ``$A0ORG_KEY`` or the file named by ``$A0ORG_KEY_FILE`` and is
never logged. The signature is HMAC-SHA256 over the message's JSON object without its
``signature`` field, serialised canonically (sorted keys, no spaces), so it does not
depend on how either side formats the file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

ENV_KEY = "A0ORG_KEY"
ENV_KEY_FILE = "A0ORG_KEY_FILE"
MAX_KEY_BYTES = 4096


class OrganizationKeyError(Exception):
    """The configured key cannot be used (the message never contains the key)."""


def load_key(key_file: Path | str | None = None) -> bytes | None:
    """The organization key, or None when none is configured.

    An explicit ``key_file`` wins, then ``$A0ORG_KEY``, then ``$A0ORG_KEY_FILE``.
    """
    if key_file is None:
        value = os.environ.get(ENV_KEY)
        if value:
            return _usable(os.fsencode(value), f"${ENV_KEY}")  # the bytes as set, whatever their encoding
        key_file = os.environ.get(ENV_KEY_FILE) or None
        if key_file is None:
            return None
    path = Path(key_file)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_KEY_BYTES + 2)  # a key and its line end; more is not a key
    except OSError as exc:
        raise OrganizationKeyError(f"{path}: cannot read the organization key file ({exc.strerror or type(exc).__name__})") from None
    return _usable(data, f"{path}: the organization key file")


def _usable(data: bytes, what: str) -> bytes:
    """The key without surrounding white space; a blank one would sign with a key everyone knows."""
    key = data.strip()
    if not key:
        raise OrganizationKeyError(f"{what} is empty")
    if len(key) > MAX_KEY_BYTES:
        raise OrganizationKeyError(f"{what} is over {MAX_KEY_BYTES} bytes; not a key")
    return key


def canonical(payload: dict[str, Any]) -> bytes:
    body = {k: v for k, v in payload.items() if k != "signature"}
    # surrogatepass: a hostile file's lone surrogate must fail the comparison, not raise
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def signature(payload: dict[str, Any], key: bytes) -> str:
    return hmac.new(key, canonical(payload), hashlib.sha256).hexdigest()


def verify(payload: dict[str, Any], key: bytes) -> str | None:
    """Why the payload's signature is not valid, or None when it is."""
    given = payload.get("signature")
    if given is None:
        return "unsigned, and an organization key is configured"
    if not isinstance(given, str):
        return "signature is not text"
    # compared as bytes: compare_digest refuses str with non-ASCII characters
    if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), signature(payload, key).encode("ascii")):
        return "wrong signature (not signed with this organization's key)"
    return None
