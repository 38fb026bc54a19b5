"""Secret redaction for everything the knowledge store and the directive queue write.

Supervisors summarise the agent's work, and that work may quote keys, tokens or
passwords; none of it may land in a file that is later injected into prompts, shown in
a terminal or committed. :func:`redact` replaces each secret with ``[REDACTED]``.

Besides the patterns, values passed to :func:`remember_secret` (the supervisors' API
keys) are redacted exactly, whatever their shape.

It errs towards redacting: a prose line such as ``password: correct horse`` loses its
value too. Running it twice changes nothing more.
"""

from __future__ import annotations

import re

MARK = "[REDACTED]"
#: Exact secrets this process knows (the supervisors' API keys, as read from the
#: environment): redacted wherever they appear, whatever their shape.
_KNOWN: set[str] = set()
#: Shorter values are not remembered: they would redact ordinary words.
MIN_KNOWN_CHARS = 8
MAX_KNOWN = 32

# PEM private keys, whole block; an unterminated block is redacted to the end of the text.
_PEM = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(?:-----END \1PRIVATE KEY( BLOCK)?-----|\Z)",
    re.DOTALL,
)

# Tokens recognisable by their shape alone.
_TOKENS = re.compile(
    "|".join(
        (
            r"\bsk-[A-Za-z0-9_\-]{16,}",  # OpenAI, OpenRouter (sk-or-...), Anthropic (sk-ant-...)
            r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained tokens
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bxox[abposre]-[A-Za-z0-9\-]{10,}",  # Slack tokens
            r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWTs
            r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
            r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab tokens
        )
    )
)

_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{16,}=*")

# user:password@ in URLs
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)")

# key = value and key: value where the key names a secret; quoted values may hold spaces
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])"
    r"([A-Za-z0-9_.\-]*?(?:password|passwd|passphrase|secret|secret[_\-]?key|token|api[_\-]?key|apikey"
    r"|access[_\-]?key|private[_\-]?key|credentials?)"
    r"[\"']?\s*(?:=|:)\s*)"
    r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s,;\"'`)\]}]+)"
)

_PLACEHOLDER = re.compile(r"^(?:\d+|\$.*|<.*|\{.*|%.*|\*+|x+|\.\.\.|none|null|true|false|os\.environ.*|getenv.*|env\(.*)$", re.IGNORECASE)


def _assignment(match: re.Match) -> str:
    key, value = match.group(1), match.group(2)
    inner = value[1:-1] if value[:1] in "\"'" and len(value) >= 2 else value
    if MARK[:-1] in inner or len(inner) < 3 or _PLACEHOLDER.match(inner):
        return match.group(0)
    quote = value[0] if value[:1] in "\"'" else ""
    return f"{key}{quote}{MARK}{quote}"


def remember_secret(value: str | None) -> None:
    """Redact ``value`` from now on wherever it appears, also where no pattern would catch it."""
    if value and len(value) >= MIN_KNOWN_CHARS and MARK not in value and len(_KNOWN) < MAX_KNOWN:
        _KNOWN.add(value)


def redact(text: str) -> str:
    """``text`` with API keys, tokens, private keys and password assignments replaced."""
    if not text:
        return text
    for secret in tuple(_KNOWN):
        text = text.replace(secret, MARK)
    text = _PEM.sub(MARK, text)
    text = _TOKENS.sub(MARK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MARK, text)
    text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + MARK + m.group(3), text)
    return _ASSIGNMENT.sub(_assignment, text)
