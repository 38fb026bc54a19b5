"""Who may say what on the shared volume: the XO's steering signature, and each unit's report seal.

* **Steering** is signed with Ed25519. The private key stays with the XO; units hold only the
  public keys (``steering.pub``), so a unit can check steering but never produce it. Every
  signature names its key (``key_id``), and a unit accepts every key its ``steering.pub`` lists,
  so a new key can be brought in before the old one is retired.
* **Reports** are sealed with HMAC-SHA256 under a key of that unit alone, which the XO also holds.
  A unit can therefore speak only for itself. (A symmetric key is enough here: the one who
  checks, the XO, is trusted; and it costs microseconds per report on a sweep of thousands.)

What is signed is the message's JSON object without its ``signature`` field, serialised with
sorted keys and no spaces, so the signature does not depend on how a file is formatted. A
report's seal covers the exact bytes the unit wrote, its last field being the seal itself.
Keys are never logged; key files are read as regular files (no link, size capped), and a
private key file that others may read is refused (by the XO) or warned about (by a unit).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from org.kernel.files import FileRefused, read_capped
from org.lazy_patterns import lazy_pattern

# cryptography is imported where a key is used, not here: the hooks load this module at every
# Agent-Zero start, linked to a volume or not, and its import costs more than the rest of them.
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

#: Retired: one HMAC secret shared by every container let any unit sign steering.
LEGACY_ENV_KEY = "A0ORG_KEY"
LEGACY_ENV_KEY_FILE = "A0ORG_KEY_FILE"
MAX_KEY_FILE_BYTES = 64_000
KEY_ID_RE = lazy_pattern(r"[0-9a-f]{16}")
#: ``,"signature":"<64 hex>"}`` closing a sealed report (a fixed length: sliced, not searched).
_SEAL_HEAD = b',"signature":"'
_SEAL_LEN = len(_SEAL_HEAD) + 64 + 2
_HEX = lazy_pattern(rb"[0-9a-f]{64}")


class OrganizationKeyError(Exception):
    """A key cannot be used; the message names the file and the reason, never the key."""


def legacy_key_problem(env: dict[str, str] | os._Environ = os.environ) -> str | None:
    """Why an HMAC organization key in the environment is no longer accepted, or None."""
    named = [name for name in (LEGACY_ENV_KEY, LEGACY_ENV_KEY_FILE) if env.get(name)]
    if not named:
        return None
    return (f"${named[0]} is set: a shared HMAC organization key is no longer accepted (every unit holding it could "
            "sign steering). Create Ed25519 keys with `a0org keys init --dir DIR` and give the XO --home DIR/xo and "
            "each unit A0ORG_STEERING_KEYS and A0ORG_UNIT_KEY (docs/security.md), then unset it")


def canonical(payload: dict[str, Any]) -> bytes:
    body = {k: v for k, v in payload.items() if k != "signature"}
    # surrogatepass: a hostile file's lone surrogate must fail the check, not raise
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def key_id(public: Ed25519PublicKey) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_line(public: Ed25519PublicKey) -> str:
    """One line of ``steering.pub``: ``ed25519 <key id> <base64 public key>``."""
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return f"ed25519 {key_id(public)} {base64.b64encode(raw).decode('ascii')}"


# --------------------------------------------------------------------------- key files


def open_to_others(mode: int) -> bool:
    return bool(mode & (stat.S_IRWXG | stat.S_IRWXO))


def read_key_file(path: Path | str, what: str) -> tuple[bytes, int]:
    """(the file's bytes, its mode); a link, a FIFO, a device or a huge file is refused."""
    try:
        data = read_capped(path, MAX_KEY_FILE_BYTES)
        return data, os.stat(path, follow_symlinks=False).st_mode
    except FileRefused as exc:
        raise OrganizationKeyError(f"{path}: {what}: {exc.reason}") from None
    except OSError as exc:
        raise OrganizationKeyError(f"{path}: cannot read the {what} ({exc.strerror or type(exc).__name__})") from None


def private_mode_problem(path: Path | str, mode: int, what: str) -> str | None:
    if open_to_others(mode):
        return f"{path}: the {what} can be read by others (mode {stat.S_IMODE(mode):04o}); run `chmod 600 {path}`"
    return None


@dataclass(frozen=True)
class SigningKey:
    """The XO's Ed25519 private key, and its id."""

    key_id: str
    private: Ed25519PrivateKey = field(repr=False)

    def sign(self, payload: dict[str, Any]) -> str:
        return self.private.sign(canonical(payload)).hex()


def private_key_from(data: bytes, what: str) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise OrganizationKeyError(f"{what}: not an unencrypted PEM private key ({type(exc).__name__})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise OrganizationKeyError(f"{what}: not an Ed25519 key")
    return key


def load_signing_key(path: Path | str) -> SigningKey:
    """The XO's signing key; refused when others may read the file."""
    data, mode = read_key_file(path, "steering signing key")
    problem = private_mode_problem(path, mode, "steering signing key")
    if problem:
        raise OrganizationKeyError(problem)
    private = private_key_from(data, f"{path}")
    return SigningKey(key_id(private.public_key()), private)


@dataclass(frozen=True)
class Keyring:
    """The public keys a unit accepts steering from, by key id."""

    keys: dict[str, Ed25519PublicKey] = field(repr=False)

    def verify(self, payload: dict[str, Any]) -> str | None:
        """Why the payload is not signed by one of these keys, or None when it is."""
        from cryptography.exceptions import InvalidSignature

        kid, given = payload.get("key_id"), payload.get("signature")
        if given is None or kid is None:
            return "unsigned; this unit takes only steering signed by the XO"
        if not isinstance(kid, str) or not isinstance(given, str):
            return "key_id and signature must be text"
        public = self.keys.get(kid)
        if public is None:
            return f"signed with key {kid[:16]!r}, which is not in this unit's steering keys"
        try:
            public.verify(bytes.fromhex(given), canonical(payload))
        except (ValueError, InvalidSignature):
            return "wrong signature (not signed by the XO's key)"
        return None


def parse_keyring(text: str, what: str) -> Keyring:
    """``steering.pub``: ``ed25519 <key id> <base64>`` per line; ``#`` starts a comment."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    keys: dict[str, Ed25519PublicKey] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 3 or parts[0] != "ed25519":
                raise ValueError("expected 'ed25519 <key id> <base64 public key>'")
            public = Ed25519PublicKey.from_public_bytes(base64.b64decode(parts[2], validate=True))
        except (ValueError, binascii.Error) as exc:
            raise OrganizationKeyError(f"{what}: line {number}: not a public key ({exc})") from None
        if key_id(public) != parts[1]:
            raise OrganizationKeyError(f"{what}: line {number}: key id {parts[1][:16]!r} does not match the key")
        keys[parts[1]] = public
    if not keys:
        raise OrganizationKeyError(f"{what}: no public key in it")
    return Keyring(keys)


def load_keyring(path: Path | str) -> Keyring:
    data, _ = read_key_file(path, "steering public keys")
    try:
        return parse_keyring(data.decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise OrganizationKeyError(f"{path}: not UTF-8 text") from None


# --------------------------------------------------------------------------- report seals


UNIT_KEY_BYTES = 32


def unit_key_from(data: bytes, what: str) -> bytes:
    """A unit's report key file holds 64 hex digits."""
    text = data.strip()
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != UNIT_KEY_BYTES:
        raise OrganizationKeyError(f"{what}: not a unit report key ({UNIT_KEY_BYTES * 2} hex digits)")
    return key


def load_unit_key(path: Path | str) -> tuple[bytes, str | None]:
    """(the unit's report key, a warning when others may read its file)."""
    data, mode = read_key_file(path, "unit report key")
    return unit_key_from(data, str(path)), private_mode_problem(path, mode, "unit report key")


def seal_report(body: str, key: bytes) -> str:
    """The report's compact JSON with ``"signature"`` added as its last field."""
    if not body.endswith("}"):
        raise ValueError("a report is a JSON object")
    mac = hmac.digest(key, body.encode("utf-8"), "sha256").hex()
    return f'{body[:-1]},"signature":"{mac}"}}'


def seal_problem(data: bytes, key: bytes) -> str | None:
    """Why a report's bytes are not sealed with this unit's key, or None when they are."""
    data = data.rstrip()
    tail = data[-_SEAL_LEN:]
    given = tail[len(_SEAL_HEAD):-2]
    if not (tail.startswith(_SEAL_HEAD) and tail.endswith(b'"}') and _HEX.fullmatch(given)):
        return "not sealed with a unit key (no trailing signature field); the XO takes only sealed reports"
    body = data[:-_SEAL_LEN] + b"}"
    expected = hmac.digest(key, body, "sha256").hex().encode("ascii")
    if not hmac.compare_digest(expected, given):
        return "wrong seal (not written with this unit's key)"
    return None
