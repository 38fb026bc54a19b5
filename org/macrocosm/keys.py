"""The macrocosm's key folder, made and changed by ``a0org keys``; what the XO loads from its part.

::

    <dir>/xo/                     the XO's home (0700): mount it into the XO only
      signing/<key id>.pem        Ed25519 private keys that sign steering (0600)
      signing/active              the id of the key that signs now
      units/<unit>.key            each unit's report key, to check its reports (0600)
      units.yaml                  which role each unit is judged by (unit id: role id)
      epoch                       the XO's start: above every earlier one, and at least the time of the start
      xo.sqlite3                  the XO's memory of each unit (written by the XO, org/macrocosm/store.py)
      steering.yaml               optional: the XO's own wording of the steering texts
      roles/<role id>.yaml        optional: the XO's copy of the roles it judges by
    <dir>/public/steering.pub     the public keys units accept steering from: mount into every unit
    <dir>/units/<unit>.key        one unit's report key (0600): mount into that unit only

Every private file is created 0600 in folders made 0700; the XO refuses to start when one
is readable by others, and ``a0org keys check`` says which.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from org.contracts.common import is_identifier
from org.kernel.files import FileRefused, atomic_write_bytes, read_capped
from org.kernel.log import warn_once

from .signing import (
    KEY_ID_RE,
    Keyring,
    OrganizationKeyError,
    SigningKey,
    key_id,
    load_signing_key,
    load_unit_key,
    open_to_others,
    parse_keyring,
    public_line,
)

PUBLIC_FILE = "steering.pub"
MAX_SMALL_FILE = 4096


@dataclass(frozen=True)
class KeyFolder:
    root: Path

    @property
    def xo_home(self) -> Path:
        return self.root / "xo"

    @property
    def public_file(self) -> Path:
        return self.root / "public" / PUBLIC_FILE

    def unit_key(self, unit: str) -> Path:
        return self.root / "units" / f"{unit}.key"


@dataclass(frozen=True)
class XOHomeLayout:
    root: Path

    @property
    def signing_dir(self) -> Path:
        return self.root / "signing"

    @property
    def active_file(self) -> Path:
        return self.signing_dir / "active"

    @property
    def units_dir(self) -> Path:
        return self.root / "units"

    @property
    def units_file(self) -> Path:
        return self.root / "units.yaml"

    @property
    def epoch_file(self) -> Path:
        return self.root / "epoch"

    @property
    def steering_file(self) -> Path:
        return self.root / "steering.yaml"

    @property
    def roles_dir(self) -> Path:
        return self.root / "roles"


# --------------------------------------------------------------------------- writing keys


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def _new_signing_key(folder: KeyFolder) -> str:
    home = XOHomeLayout(folder.xo_home)
    _private_dir(folder.root)
    _private_dir(home.root)
    _private_dir(home.signing_dir)
    private = Ed25519PrivateKey.generate()
    kid = key_id(private.public_key())
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    atomic_write_bytes(home.signing_dir / f"{kid}.pem", pem, mode=0o600)
    _write_public(folder, {**_public_lines(folder), kid: public_line(private.public_key())})
    return kid


def _public_lines(folder: KeyFolder) -> dict[str, str]:
    try:
        text = read_capped(folder.public_file, 64_000).decode("utf-8")
    except FileNotFoundError:
        return {}
    except (FileRefused, OSError, UnicodeDecodeError) as exc:
        raise OrganizationKeyError(f"{folder.public_file}: cannot read ({exc})") from None
    keyring = parse_keyring(text, str(folder.public_file)) if text.strip() else Keyring({})
    return {kid: public_line(public) for kid, public in keyring.keys.items()}


def _write_public(folder: KeyFolder, lines: dict[str, str]) -> None:
    folder.public_file.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(folder.public_file.parent, 0o755)
    text = "# public keys the units accept the XO's steering from (a0org keys)\n" + "".join(f"{line}\n" for line in lines.values())
    atomic_write_bytes(folder.public_file, text.encode("ascii"), mode=0o644)


def set_active(folder: KeyFolder, kid: str) -> None:
    atomic_write_bytes(XOHomeLayout(folder.xo_home).active_file, f"{kid}\n".encode("ascii"), mode=0o600)


def init(folder: KeyFolder) -> str:
    """A first signing key, made active; refused when the folder already has one."""
    home = XOHomeLayout(folder.xo_home)
    if home.active_file.exists():
        raise OrganizationKeyError(f"{folder.root}: already has keys; use `a0org keys rotate` for a new signing key")
    kid = _new_signing_key(folder)
    set_active(folder, kid)
    return kid


def rotate(folder: KeyFolder) -> tuple[str, str | None]:
    """A new signing key, active at once; the old one stays in ``steering.pub`` until retired.

    (new id, old id). Units accept both while the old one is listed.
    """
    old = active_id(XOHomeLayout(folder.xo_home))
    kid = _new_signing_key(folder)
    set_active(folder, kid)
    return kid, old


def retire(folder: KeyFolder, kid: str) -> None:
    """Drop a signing key: its private file and its line in ``steering.pub``; never the active one."""
    home = XOHomeLayout(folder.xo_home)
    if not KEY_ID_RE.fullmatch(kid):
        raise OrganizationKeyError(f"{kid!r} is not a key id (16 hex digits)")
    if active_id(home) == kid:
        raise OrganizationKeyError(f"{kid} is the active signing key; rotate first")
    lines = _public_lines(folder)
    if kid not in lines:
        raise OrganizationKeyError(f"{kid} is not in {folder.public_file}")
    del lines[kid]
    _write_public(folder, lines)
    try:
        os.unlink(home.signing_dir / f"{kid}.pem")
    except FileNotFoundError:
        pass


def add_unit(folder: KeyFolder, unit: str, role: str | None = None) -> Path:
    """A report key for one unit: its copy for the unit, and the XO's; with ``role``, the role
    the XO judges the unit by, in ``<home>/units.yaml`` (and a unit that has a key keeps it)."""
    if not is_identifier(unit):
        raise OrganizationKeyError(f"{unit!r} is not a valid unit id (lower-case letters, digits, '_' and '-')")
    if role is not None and not is_identifier(role):
        raise OrganizationKeyError(f"{role!r} is not a valid role id (lower-case letters, digits, '_' and '-')")
    key = os.urandom(32).hex().encode("ascii") + b"\n"
    home = XOHomeLayout(folder.xo_home)
    _private_dir(folder.root)
    _private_dir(home.root)
    _private_dir(home.units_dir)
    _private_dir(folder.unit_key(unit).parent)
    if role is not None:
        set_unit_role(home, unit, role)
    if role is not None and folder.unit_key(unit).exists() and (home.units_dir / f"{unit}.key").exists():
        return folder.unit_key(unit)  # a role given to a unit that has its key already: the key stays
    atomic_write_bytes(home.units_dir / f"{unit}.key", key, mode=0o600)
    atomic_write_bytes(folder.unit_key(unit), key, mode=0o600)
    return folder.unit_key(unit)


def set_unit_role(home: XOHomeLayout, unit: str, role: str) -> None:
    """``unit: role`` in the XO's ``units.yaml`` (the other entries kept, sorted)."""
    from .roles import read_unit_roles

    table = {**read_unit_roles(home.units_file), unit: role}
    text = "# unit id: the role the XO judges it by (a0org keys unit NAME --role ROLE)\n" + "".join(
        f"{u}: {r}\n" for u, r in sorted(table.items()))
    atomic_write_bytes(home.units_file, text.encode("ascii"), mode=0o600)


def check(folder: KeyFolder) -> list[str]:
    """Every private file or folder others may read or enter."""
    problems = []
    for base, dirs, files in os.walk(folder.root):
        if Path(base) == folder.public_file.parent:
            continue
        for name in [*dirs, *files]:
            path = Path(base) / name
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                problems.append(f"{path}: is a symbolic link; key files must be regular files")
            elif open_to_others(st.st_mode) and not (stat.S_ISDIR(st.st_mode) and path == folder.public_file.parent):
                problems.append(f"{path}: others may access it (mode {stat.S_IMODE(st.st_mode):04o}); run `chmod {'700' if stat.S_ISDIR(st.st_mode) else '600'} {path}`")
    return problems


# --------------------------------------------------------------------------- the XO's home


def active_id(home: XOHomeLayout) -> str | None:
    try:
        text = read_capped(home.active_file, MAX_SMALL_FILE).decode("ascii", "replace").strip()
    except FileNotFoundError:
        return None
    except (FileRefused, OSError) as exc:
        raise OrganizationKeyError(f"{home.active_file}: cannot read ({exc})") from None
    if not KEY_ID_RE.fullmatch(text):
        raise OrganizationKeyError(f"{home.active_file}: not a key id")
    return text


def checked_home(layout: XOHomeLayout, volume: Path | str | None = None) -> SigningKey:
    """The home's active signing key, once the home is shown fit for the XO: outside the volume,
    a private folder, an active key that loads under its own id; else :class:`OrganizationKeyError`."""
    if volume is not None:
        real, vol = os.path.realpath(layout.root), os.path.realpath(volume)
        if real == vol or real.startswith(vol + os.sep):
            raise OrganizationKeyError(f"{layout.root}: the XO's home is inside the shared volume {volume}, where units can write; keep it outside")
    try:
        st = os.stat(layout.root, follow_symlinks=False)
    except OSError as exc:
        raise OrganizationKeyError(f"{layout.root}: cannot use the XO's home ({exc.strerror or exc}); create it with `a0org keys init`") from None
    if not stat.S_ISDIR(st.st_mode):
        raise OrganizationKeyError(f"{layout.root}: the XO's home is not a folder")
    if open_to_others(st.st_mode):
        raise OrganizationKeyError(f"{layout.root}: others may access the XO's home (mode {stat.S_IMODE(st.st_mode):04o}); run `chmod 700 {layout.root}`")
    kid = active_id(layout)
    if kid is None:
        raise OrganizationKeyError(f"{layout.active_file}: no active signing key; run `a0org keys init`")
    signing = load_signing_key(layout.signing_dir / f"{kid}.pem")
    if signing.key_id != kid:
        raise OrganizationKeyError(f"{layout.signing_dir / (kid + '.pem')}: holds key {signing.key_id}, not {kid}")
    return signing


@dataclass
class XOHome:
    """What the XO loads from its home: its signing key, the units' report keys, its epoch."""

    layout: XOHomeLayout
    signing: SigningKey
    epoch: int
    unit_keys: dict[str, bytes] = field(default_factory=dict, repr=False)
    _units_stamp: tuple[int, int] | None = None

    @classmethod
    def load(cls, root: Path | str, volume: Path | str | None = None) -> "XOHome":
        """Refused when the home is inside the volume, open to others, or has no active key.

        Counts one more start in ``epoch`` (:func:`bump_epoch`).
        """
        layout = XOHomeLayout(Path(root))
        signing = checked_home(layout, volume)
        home = cls(layout, signing, bump_epoch(layout))
        home.refresh_units()
        return home

    def refresh_units(self) -> None:
        """Read the units' report keys again when the folder changed (a unit was added)."""
        try:
            st = os.stat(self.layout.units_dir, follow_symlinks=False)
            stamp = (st.st_mtime_ns, st.st_ino)
        except OSError:
            stamp = None
        if stamp == self._units_stamp:
            return
        self._units_stamp = stamp
        keys: dict[str, bytes] = {}
        try:
            names = sorted(os.listdir(self.layout.units_dir))
        except OSError:
            names = []
        for name in names:
            unit = name.removesuffix(".key")
            if name.endswith(".key") and is_identifier(unit):
                try:
                    key, loose = load_unit_key(self.layout.units_dir / name)
                except OrganizationKeyError as exc:
                    warn_once(f"{exc}; the reports of unit '{unit}' are refused until it is fixed")
                    continue
                if loose:
                    warn_once(f"{loose}; the reports of unit '{unit}' are refused until it is fixed")
                    continue
                keys[unit] = key
        self.unit_keys = keys


def bump_epoch(layout: XOHomeLayout, now: float | None = None) -> int:
    """The next start's epoch: above the last one, and never below the time in seconds, so a
    home made afresh does not start again below the epochs every unit has already taken."""
    try:
        text = read_capped(layout.epoch_file, MAX_SMALL_FILE).decode("ascii", "replace").strip()
        previous = int(text) if text.isdigit() else 0
    except FileNotFoundError:
        previous = 0
    except (FileRefused, OSError) as exc:
        raise OrganizationKeyError(f"{layout.epoch_file}: cannot read ({exc})") from None
    epoch = max(previous + 1, int(time.time() if now is None else now))
    atomic_write_bytes(layout.epoch_file, f"{epoch}\n".encode("ascii"), mode=0o600)
    return epoch
