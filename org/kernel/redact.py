"""Secret redaction for everything the pack sends to a model or writes to a file.

Supervisors summarise the agent's work, and that work may quote keys, tokens or
passwords; none of it may leave the process or land in a file that is later injected
into prompts, shown in a terminal or committed. :func:`redact` replaces each secret with
``[REDACTED]``. Three sources of detection, all applied:

* detect-secrets (Yelp's scanner, a dependency): its token plugins (AWS, Azure, GitHub,
  GitLab, JWT, Mailchimp, npm, OpenAI, PyPI, SendGrid, Slack, Square, Stripe, Telegram,
  Twilio, Discord, IBM, ...), its keyword detector for quoted values assigned to
  secret-like names, and its high-entropy detector for quoted random strings;
* the pack's own patterns (:mod:`org.kernel.secret_patterns`) where detect-secrets has
  none: newer token formats, command lines, HTTP headers, kubeconfig and Docker files,
  URLs with an empty user, unquoted ``NAME=value``;
* values passed to :func:`remember_secret` (the supervisors' API keys), whatever their shape.

Code stays readable: ``password: str``, ``if not token: raise AuthError()`` and
``token = get_token()`` are kept. It errs towards redacting elsewhere: a prose line such
as ``password: correct horse`` loses its value. Running it twice changes nothing more.
Without detect-secrets (an install that lacks it) the pack's own patterns still run.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .log import warn_once
from .secret_patterns import ASSIGNMENT, CODE_VALUE, IN_CONTEXT, NAME_HINT, PLACEHOLDER, RANDOM_LOOKING, TOKENS, present

M = TypeVar("M", bound=BaseModel)

MARK = "[REDACTED]"
#: Exact secrets this process knows (the supervisors' API keys, as read from the
#: environment): redacted wherever they appear, whatever their shape.
_KNOWN: set[str] = set()
#: Shorter values are not remembered: they would redact ordinary words.
MIN_KNOWN_CHARS = 8
MAX_KNOWN = 32
#: A found value shorter than this is not a secret worth a mark (``pw: ab``).
MIN_SECRET_CHARS = 3
#: Quoted strings at least this long are checked for randomness (detect-secrets' base64 entropy).
ENTROPY_MIN_CHARS = 20

# PEM private keys, whole block; an unterminated block is redacted to the end of the text.
_PEM = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(?:-----END \1PRIVATE KEY( BLOCK)?-----|\Z)",
    re.DOTALL,
)
_QUOTED = re.compile(r"([\"'])([A-Za-z0-9+/=_\-]{%d,})\1" % ENTROPY_MIN_CHARS)
_PLUGIN_NAMES = (
    "aws.AWSKeyDetector", "azure_storage_key.AzureStorageKeyDetector", "basic_auth.BasicAuthDetector",
    "discord.DiscordBotTokenDetector", "github_token.GitHubTokenDetector", "gitlab_token.GitLabTokenDetector",
    "ibm_cos_hmac.IbmCosHmacDetector", "jwt.JwtTokenDetector", "mailchimp.MailchimpDetector", "npm.NpmDetector",
    "openai.OpenAIDetector", "pypi_token.PypiTokenDetector", "sendgrid.SendGridDetector", "slack.SlackDetector",
    "square_oauth.SquareOAuthDetector", "stripe.StripeDetector", "telegram_token.TelegramBotTokenDetector",
    "twilio.TwilioKeyDetector",
)
#: The slowest plugins run only when the text holds one of these (lower case); the others always run.
_PLUGIN_NEEDLES = {
    "IbmCosHmacDetector": ("cos",), "MailchimpDetector": ("-us",), "SlackDetector": ("xox", "hooks.slack"),
    "StripeDetector": ("k_live_",), "DiscordBotTokenDetector": (".",), "AWSKeyDetector": ("aws", "akia", "asia", "a3t", "abia", "acca"),
}


class _Library:
    """detect-secrets' detectors, loaded once; absent when the library is not installed."""

    def __init__(self) -> None:
        import importlib

        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
        from detect_secrets.plugins.keyword import QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, KeywordDetector

        self.patterns: list[tuple[tuple[str, ...], re.Pattern[str]]] = []
        for name in _PLUGIN_NAMES:
            module, cls = name.split(".")
            plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)()
            self.patterns += [(_PLUGIN_NEEDLES.get(cls, ()), pattern) for pattern in plugin.denylist]
        self.keyword = KeywordDetector()
        self.keyword_regexes = QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
        self.entropy = Base64HighEntropyString()

    def spans(self, text: str, lowered: str) -> list[tuple[int, int]]:
        """Where the library's token detectors see a secret (its first group when the pattern has one)."""
        found = []
        for needles, pattern in self.patterns:
            if needles and not present(needles, lowered):
                continue
            group = 1 if pattern.groups else 0
            found += [match.span(group) for match in pattern.finditer(text)]
        return found

    def keyword_values(self, line: str) -> list[str]:
        return [value for value in self.keyword.analyze_string(line, self.keyword_regexes) if value]

    def random_strings(self, text: str) -> list[tuple[int, int]]:
        limit = self.entropy.entropy_limit
        return [m.span(2) for m in _QUOTED.finditer(text) if self.entropy.calculate_shannon_entropy(m.group(2)) > limit]


@lru_cache(maxsize=1)
def _library() -> _Library | None:
    try:
        return _Library()
    except Exception as exc:  # not installed, or a version whose plugins moved: the pack's patterns still run
        warn_once(f"redaction: detect-secrets is not usable ({type(exc).__name__}: {exc}); only the pack's own patterns run",
                  key="redact:library")
        return None


def remember_secret(value: str | None) -> None:
    """Redact ``value`` from now on wherever it appears, also where no pattern would catch it."""
    if value and len(value) >= MIN_KNOWN_CHARS and MARK not in value and len(_KNOWN) < MAX_KNOWN:
        _KNOWN.add(value)


def _mark_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (at least :data:`MIN_SECRET_CHARS` long) replaced; overlapping spans merged."""
    spans = sorted((a, b) for a, b in spans if b - a >= MIN_SECRET_CHARS and text[a:b] != MARK)
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        if start < last:  # overlaps the previous span: extend it
            if end > last:
                out[-1] = MARK
                last = end
            continue
        out += [text[last:start], MARK]
        last = end
    out.append(text[last:])
    return "".join(out)


def _assignment(match: re.Match[str]) -> str:
    key, value = match.group("key"), match.group("value")
    inner = value[1:-1] if value[:1] in "\"'" and len(value) >= 2 else value
    if MARK[:-1] in inner or len(inner) < MIN_SECRET_CHARS or PLACEHOLDER.match(inner):
        return match.group(0)
    name = key.strip(" \t\"':=>").lower()
    code = CODE_VALUE.match(inner) and (inner.endswith(("(", "[")) or not RANDOM_LOOKING.search(inner))
    if value[:1] not in "\"'" and (code or inner.lower() == name):
        return match.group(0)  # code (``password: str``, ``token = get_token()``), not a value
    quote = value[0] if value[:1] in "\"'" else ""
    return f"{key}{quote}{MARK}{quote}"


def _in_context(text: str, lowered: str) -> str:
    spans = []
    for needles, pattern in IN_CONTEXT:
        if not present(needles, lowered):
            continue
        for match in pattern.finditer(text):
            value = match.group("s")
            inner = value.strip("\"'")
            if MARK not in value and not PLACEHOLDER.match(inner):
                spans.append(match.span("s"))
    return _mark_spans(text, spans)


def _names(text: str, library: _Library | None) -> str:
    """``name = value`` secrets, line by line, on the lines that mention a secret-like name."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not NAME_HINT.search(line):
            continue
        line = ASSIGNMENT.sub(_assignment, line)
        for value in library.keyword_values(line) if library is not None else ():
            if len(value) >= MIN_SECRET_CHARS and not PLACEHOLDER.match(value) and MARK not in value:
                line = line.replace(value, MARK)  # within this line only
        lines[number] = line
    return "\n".join(lines)


def redact(text: str) -> str:
    """``text`` with API keys, tokens, private keys, passwords and other credentials replaced by ``[REDACTED]``."""
    if not text:
        return text
    for secret in tuple(_KNOWN):
        text = text.replace(secret, MARK)
    if "PRIVATE KEY" in text:
        text = _PEM.sub(MARK, text)
    lowered = text.lower()
    for needles, pattern in TOKENS:
        if present(needles, lowered):
            text = pattern.sub(MARK, text)
    library = _library()
    if library is not None:
        text = _mark_spans(text, library.spans(text, text.lower()))
    text = _in_context(text, text.lower())
    text = _names(text, library)
    if library is not None:
        text = _mark_spans(text, library.random_strings(text))
    return text


def redact_value(value: Any) -> Any:
    """A JSON-like value with every string in it redacted (dict keys kept)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(item) for item in value]
    return value


def redact_model(model: M) -> M:
    """A copy of a pydantic model with every string in it redacted (a model's own answer before it is stored)."""
    data = redact_value(model.model_dump())
    try:
        return type(model).model_validate(data)
    except ValidationError:  # a mark longer than the short secret it replaced broke a length limit: keep it all the same
        return type(model).model_construct(**data)


__all__ = ["MARK", "redact", "redact_model", "redact_value", "remember_secret"]
