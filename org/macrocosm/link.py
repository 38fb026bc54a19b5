"""A unit's link to the shared volume: where it is, and the keys it speaks and listens with.

``$A0ORG_VOLUME`` is the volume, ``$A0ORG_UNIT`` the unit (the host name by default).
``$A0ORG_STEERING_KEYS`` names ``steering.pub``, the XO's public keys: with it the unit takes
only steering the XO signed. ``$A0ORG_UNIT_KEY`` names this unit's own report key: with it
every report is sealed, so the XO knows it comes from this unit. ``$A0ORG_UNIT_STATE`` is where
the unit keeps the highest steering it has taken, outside the chat and off the volume
(default ``<organizations folder>/unit-steering/<unit>.json``).

A unit with a private key in its reach (the XO's home, a signing key beside its public
keys or among its secrets) says so once: its agent could read it and sign steering.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from org.contracts.common import is_identifier
from org.kernel.log import logger, warn_once
from org.kernel.paths import organizations_dir

from .signing import Keyring, OrganizationKeyError, legacy_key_problem, load_keyring, load_unit_key
from .volume import ENV_UNIT, ENV_VOLUME, VolumeLayout

ENV_STEERING_KEYS = "A0ORG_STEERING_KEYS"
ENV_UNIT_KEY = "A0ORG_UNIT_KEY"
ENV_UNIT_STATE = "A0ORG_UNIT_STATE"
#: Where a unit looks for a private key it should not be able to read.
SECRET_FOLDERS = (Path("/run/secrets"),)
_LOOKED_AT = 200  # entries per folder


def host_unit_id(hostname: str | None = None) -> str:
    """The host name made into a unit id: lower case, other characters become "-"."""
    name = (hostname if hostname is not None else socket.gethostname()).lower()
    name = re.sub(r"[^a-z0-9_-]", "-", name)
    return re.sub(r"^[^a-z0-9]+", "", name)[:64]


@dataclass(frozen=True)
class UnitLink:
    """This unit's place on the shared volume, and its keys."""

    layout: VolumeLayout
    unit: str
    #: the XO's public keys; None: unsigned steering is taken (no keys configured)
    keyring: Keyring | None = field(default=None, repr=False)
    #: this unit's report key; None: reports go out unsealed
    report_key: bytes | None = field(default=None, repr=False)
    #: the highest (epoch, seq) taken, kept outside the chat; None: not kept
    state_file: Path | None = None
    #: ``steering.pub``, read again when it changes (a key rotated in or retired): see :meth:`current_keyring`
    keys_file: Path | None = None
    _keys: dict = field(default_factory=dict, repr=False, compare=False)

    def current_keyring(self) -> Keyring | None:
        """The XO's public keys as ``steering.pub`` has them now: read again when the file
        changed (its size, time or inode), so a rotation reaches a running unit. A file that
        cannot be read keeps the keys it had (logged once)."""
        if self.keys_file is None:
            return self.keyring
        stamp = _stamp(self.keys_file)
        if "stamp" not in self._keys:
            self._keys.update(stamp=stamp, keyring=self.keyring)
        elif stamp != self._keys["stamp"]:
            self._keys["stamp"] = stamp
            try:
                self._keys["keyring"] = load_keyring(self.keys_file)
                logger.info("%s: steering keys read again (%d key(s))", self.keys_file, len(self._keys["keyring"].keys))
            except OrganizationKeyError as exc:
                warn_once(f"{exc}; the steering keys read before are kept", key=f"keys reload {self.keys_file}")
        return self._keys["keyring"]

    @classmethod
    def from_env(cls) -> UnitLink | None:
        """The link the environment describes; None when there is no volume, or when the unit
        id or a key is unusable (logged once): a unit that cannot check signatures takes no steering."""
        env = os.environ
        volume = env.get(ENV_VOLUME)
        if not volume:
            return None
        unit = env.get(ENV_UNIT) or host_unit_id()
        if not is_identifier(unit):
            warn_once(
                f"${ENV_UNIT}: {unit[:80]!r} is not a valid unit id (lower-case letters, digits, '_' and '-', "
                f"at most 64, starting with a letter or digit); this unit is not linked to the volume {volume}",
                key=f"unit id {unit[:80]!r}",
            )
            return None
        legacy = legacy_key_problem(env)
        if legacy:
            warn_once(f"{legacy}; this unit is not linked to the volume {volume}")
            return None
        try:
            keyring = load_keyring(env[ENV_STEERING_KEYS]) if env.get(ENV_STEERING_KEYS) else None
            report_key = None
            if env.get(ENV_UNIT_KEY):
                report_key, loose = load_unit_key(env[ENV_UNIT_KEY])
                if loose:
                    logger.warning("%s (any process that can read it can write reports as this unit)", loose)
        except OrganizationKeyError as exc:
            warn_once(f"{exc}; this unit is not linked to the volume {volume}")
            return None
        if keyring is None:
            warn_once(f"${ENV_STEERING_KEYS} is not set: unit '{unit}' applies unsigned steering, so anyone who can write "
                      f"to {volume} can steer its agent (docs/security.md)", key="unsigned steering")
        if report_key is None:
            warn_once(f"${ENV_UNIT_KEY} is not set: the reports of unit '{unit}' are not sealed, and an XO with keys "
                      "refuses them (docs/security.md)", key="unsealed reports")
        private_key_in_reach(env)
        state = env.get(ENV_UNIT_STATE) or str(organizations_dir() / "unit-steering" / f"{unit}.json")
        keys_file = Path(env[ENV_STEERING_KEYS]) if keyring is not None else None
        link = cls(VolumeLayout(volume), unit, keyring, report_key, Path(state), keys_file)
        if keys_file is not None:
            link._keys.update(stamp=_stamp(keys_file), keyring=keyring)  # the file as it was read
        return link

    @property
    def report(self) -> Path:
        return self.layout.report(self.unit)

    @property
    def inbox(self) -> Path:
        return self.layout.inbox(self.unit)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _holds_private_key(path: Path) -> bool:
    try:
        if not path.is_file() or path.stat().st_size > 64_000:
            return False
        with open(path, "rb") as handle:
            return b"PRIVATE KEY-----" in handle.read(64_000)
    except OSError:
        return False


def private_key_in_reach(env: dict[str, str] | os._Environ = os.environ) -> list[Path]:
    """Private keys this unit's processes can read; warned about once."""
    folders: list[Path] = list(SECRET_FOLDERS)
    public = env.get(ENV_STEERING_KEYS)
    if public:
        beside = Path(public).parent
        folders += [beside, beside.parent, beside.parent / "xo" / "signing"]
    if env.get("A0ORG_XO_HOME"):
        folders.append(Path(env["A0ORG_XO_HOME"]) / "signing")
    found: list[Path] = []
    seen: set[Path] = set()
    for folder in folders:
        if folder in seen:
            continue
        seen.add(folder)
        try:
            with os.scandir(folder) as entries:
                names = [e.name for _, e in zip(range(_LOOKED_AT), entries)]
        except OSError:
            continue
        found += [folder / n for n in names if _holds_private_key(folder / n)]
    if found:
        warn_once(f"{found[0]}: a private key is within reach of this unit ({len(found)} found); its agent can read it. "
                  "Mount only public/steering.pub and the unit's own report key into a unit (docs/security.md)",
                  key="private key in reach")
    return found


#: (the environment that made it, the link): ``current_link`` rebuilds only when it changes.
_current: tuple[tuple[str | None, ...], UnitLink | None] | None = None
_ENV_NAMES = (ENV_VOLUME, ENV_UNIT, ENV_STEERING_KEYS, ENV_UNIT_KEY, ENV_UNIT_STATE, "A0ORG_KEY", "A0ORG_KEY_FILE")


def current_link() -> UnitLink | None:
    """The link of this process, built once per distinct environment (key files are read once)."""
    global _current
    if not os.environ.get(ENV_VOLUME):
        _current = None
        return None  # not linked (the common case): one look at the environment
    marker = tuple(os.environ.get(name) for name in _ENV_NAMES)
    if _current is None or _current[0] != marker:
        _current = (marker, UnitLink.from_env() if marker[0] else None)
    return _current[1]
