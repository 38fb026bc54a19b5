"""Credential files: never read, never sent, whatever redaction would leave of them.

Redaction catches secrets by their shape; a credential file is a secret by what it is
(a Docker login, a kubeconfig, Terraform state, a cloud service account), and much of
what is in it has no recognisable shape. So these files are refused by name before a
byte is read, and a JSON file that turns out to be a service account key is refused by
its content. ``supervisors.yaml`` can add glob patterns (``never_read``).
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePath

from org.lazy_patterns import lazy_pattern

#: Globs matched against the path's end (``a/b`` matches ``/x/a/b``); case-insensitive.
DENY_LIST: tuple[str, ...] = (
    # environment and dotfiles with passwords
    ".env", ".env.*", "*.env", ".envrc", ".netrc", "_netrc", ".pgpass", ".my.cnf", ".htpasswd", ".git-credentials",
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".gem/credentials", ".vault-token", ".terraformrc", "*.tfstate",
    "*.tfstate.*", "*.tfvars", ".boto", ".s3cfg", ".dockercfg", ".docker/config.json", ".kube/config", "kubeconfig",
    "*.kubeconfig", ".aws/credentials", ".aws/config", ".azure/*", ".config/gcloud/*", "application_default_credentials.json",
    "credentials", "credentials.*", "secrets", "secrets.*", "*service-account*.json", "*service_account*.json",
    "*serviceaccount*.json", "*-sa.json", "*sa-key*.json", "client_secret*.json",
    # keys and key stores
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_*_sk", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "*.kdbx", "*.gpg", "*.asc", ".ssh/*", ".gnupg/*", "authorized_keys", "known_hosts", "*.ppk",
    # shell and client histories (commands typed with passwords in them), tool logins
    ".*_history", ".history", "fish_history", ".lesshst", "gh/hosts.yml", ".config/hub", "rclone.conf", "pip.conf",
    "pip.ini", ".git-credential-cache/*", ".docker/.token_seed", ".config/helm/registry/config.json",
    # the system's own
    "shadow", "gshadow", "/proc/*", "/sys/*", "/dev/*",
)
#: A JSON file with these is a cloud credential whatever its name.
_CREDENTIAL_JSON = lazy_pattern(r'"type"\s*:\s*"(?:service_account|authorized_user|external_account)"|"private_key"\s*:\s*"-----BEGIN')


def _matches(path: str, pattern: str) -> bool:
    pattern = pattern.lower()
    if pattern.startswith("/"):
        return fnmatch.fnmatchcase(path, pattern)
    depth = pattern.count("/") + 1
    tail = "/".join(path.rstrip("/").split("/")[-depth:])
    return fnmatch.fnmatchcase(tail, pattern)


def is_credential_file(path: str | PurePath, extra: tuple[str, ...] | list[str] = ()) -> bool:
    """True when ``path`` names a credential file (the deny list and ``extra`` globs); decided by name alone."""
    text = PurePath(path).as_posix().lower()
    return any(_matches(text, pattern) for pattern in (*DENY_LIST, *extra))


def is_credential_text(text: str) -> bool:
    """True when a file's text shows it is a credential (a cloud service account key, say)."""
    return bool(_CREDENTIAL_JSON.search(text[:20_000]))


__all__ = ["DENY_LIST", "is_credential_file", "is_credential_text"]
