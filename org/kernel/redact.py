"""Secret redaction for everything the pack sends to a model or writes to a file.

Supervisors summarise the agent's work, and that work may quote keys, tokens or
passwords; none of it may leave the process or land in a file that is later injected
into prompts, shown in a terminal or committed. :func:`redact` replaces each secret with
``[REDACTED]``. Three sources of detection, all applied:

* detect-secrets (Yelp's scanner, a dependency): its token plugins (AWS, Azure, GitHub,
  GitLab, Mailchimp, OpenAI, PyPI, SendGrid, Slack, Square, Stripe, Telegram, Twilio,
  Discord, IBM, ...), its keyword detector for quoted values assigned to secret-like names,
  and its high-entropy detector for quoted random strings (hex too);
* the pack's own patterns (:mod:`org.kernel.secret_patterns`) where detect-secrets has
  none: newer token formats, command lines, HTTP headers, config formats (kubeconfig,
  Docker, Maven, .pgpass, PuTTY, Kubernetes Secrets), prose, URLs with an empty user,
  unquoted ``NAME=value``;
* values passed to :func:`remember_secret` (the supervisors' API keys), whatever their shape.

Code stays readable: ``password: str``, ``if not token: raise AuthError()``,
``token = get_token()``, ``api_key = request.json.get("api_key")`` and lockfile hashes are
kept. Time is linear in the text: no pattern runs unbounded from every start. It errs towards redacting elsewhere: a prose line such
as ``password: correct horse`` loses its value. Running it twice changes nothing more.
Without detect-secrets (an install that lacks it) the pack's own patterns still run.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from org.lazy_patterns import lazy_pattern

from .log import warn_once
from .secret_patterns import (
    ASSIGNMENT,
    CODE_VALUE,
    HASH_CONTEXT,
    HASH_VALUE,
    IDENTIFIER,
    IN_CONTEXT,
    NAME_HINT,
    NAME_VALUE,
    PLACEHOLDER,
    RANDOM_LOOKING,
    SEQUENCE,
    TOKENS,
    present,
)

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
#: A quoted string of letters of both cases and digits this long is random above a lower entropy
#: (a 32-character key drawn from 62 symbols has about 4.6 bits a character, often under the library's 4.5).
MIXED_MIN_CHARS, MIXED_ENTROPY = 24, 3.9
#: Quoted hex this long is a secret unless the line says it is a hash or an id.
HEX_MIN_CHARS, HEX_ENTROPY = 32, 3.0
#: The library's patterns see the text in windows this long (overlapping by the longest secret they
#: match): a pattern that scans to the end of its input from every start then costs the window, not the text.
WINDOW, OVERLAP = 2048, 512

# PEM private keys, whole block; an unterminated block is redacted to the end of the text.
_PEM = lazy_pattern(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(?:-----END \1PRIVATE KEY( BLOCK)?-----|\Z)",
    re.DOTALL,
)
_QUOTED = lazy_pattern(r"([\"'])([A-Za-z0-9+/=_\-]{%d,})\1" % ENTROPY_MIN_CHARS)
_HEX = lazy_pattern(r"([\"'])([0-9a-fA-F]{%d,})\1" % HEX_MIN_CHARS)
_MIXED = lazy_pattern(r"(?=[^\"']*[a-z])(?=[^\"']*[A-Z])(?=[^\"']*[0-9])")
_SECRET_DATA = lazy_pattern(r"(?m)^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*\r?\n(?P<body>(?:(?P=indent)[ \t]+[^\n]*\r?\n?){1,500})")
_DATA_VALUE = lazy_pattern(r"(?m)^[ \t]+[\w.\-]{1,253}:[ \t]*(?P<s>[^\s#|>][^\n]*)$")
_PLUGIN_NAMES = (
    "aws.AWSKeyDetector", "azure_storage_key.AzureStorageKeyDetector", "basic_auth.BasicAuthDetector",
    "discord.DiscordBotTokenDetector", "github_token.GitHubTokenDetector", "gitlab_token.GitLabTokenDetector",
    "ibm_cos_hmac.IbmCosHmacDetector", "mailchimp.MailchimpDetector",
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
        """Where the library's token detectors see a secret: the whole token, or the value a pattern's
        first group holds when that group comes after words of context (``aws_secret = "..."``).
        Looked for window by window, so that every pattern costs time linear in the text."""
        found: set[tuple[int, int]] = set()
        for needles, pattern in self.patterns:
            if needles and not present(needles, lowered):
                continue
            for start in range(0, max(1, len(text) - OVERLAP), WINDOW - OVERLAP):
                for match in pattern.finditer(text, start, start + WINDOW):
                    group = 1 if pattern.groups and match.start(1) > match.start() else 0
                    if match.start(group) >= 0:
                        found.add(match.span(group))
        return sorted(found)

    def keyword_values(self, line: str) -> list[str]:
        return [value for value in self.keyword.analyze_string(line, self.keyword_regexes) if value]

    def random_strings(self, text: str) -> list[tuple[int, int]]:
        """Quoted strings random enough to be keys; a content hash (``sha512-...``) is not one, nor is
        quoted hex on a line that calls it a hash, a commit or an id."""
        limit, entropy = self.entropy.entropy_limit, self.entropy.calculate_shannon_entropy
        found = []
        for match in _QUOTED.finditer(text):
            value = match.group(2)
            if HASH_VALUE.match(value) or _is_hex(value) or SEQUENCE.search(value):
                continue
            mixed = len(value) >= MIXED_MIN_CHARS and value.isalnum() and _MIXED.match(value)
            if entropy(value) > (min(limit, MIXED_ENTROPY) if mixed else limit):
                found.append(match.span(2))
        for match in _HEX.finditer(text):
            line = text[text.rfind("\n", 0, match.start()) + 1: match.start()]
            if not HASH_CONTEXT.search(line) and entropy(match.group(2).lower()) > HEX_ENTROPY:
                found.append(match.span(2))
        return found


def _is_hex(value: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in value)


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
    quoted = value[:1] in "\"'" and len(value) >= 2
    inner = value[1:-1] if quoted else value
    if MARK[:-1] in inner or len(inner) < MIN_SECRET_CHARS or PLACEHOLDER.match(inner):
        return match.group(0)
    if quoted and _a_name(inner):
        return match.group(0)  # the name of a variable or a file, not its content
    if not quoted and _is_code(key, inner, match.string[match.end():]):
        return match.group(0)  # code (``password: str``, ``token = get_token()``, ``token := idp.sign(t)``), not a value
    quote = value[0] if quoted else ""
    return f"{key}{quote}{MARK}{quote}"


def _a_name(value: str) -> bool:
    return bool(NAME_VALUE.match(value)) and not RANDOM_LOOKING.search(value)


def _is_code(key: str, inner: str, rest: str) -> bool:
    """An unquoted value that is code: a keyword or a type, a call or an index of a name that is not random,
    an attribute, or a plain name that reads as a variable (``token=git_token``, ``credentials=creds``,
    ``auth: state,``); ``PASSWORD=hunter2``, ``password: hunter2`` and ``token=abc`` are values."""
    if CODE_VALUE.match(inner) or inner[0] in "([{":
        return True
    identifier = IDENTIFIER.match(inner)
    if identifier is None or any(len(part) >= 8 and RANDOM_LOOKING.search(part) for part in identifier.group(1).split(".")):
        return False
    if identifier.group(2) or "." in inner:
        return True
    keys, values = _words(key), _words(inner)
    if keys & values or any(len(v) >= 4 and any(k.startswith(v) for k in keys) for v in values):
        return True  # a variable named for what it holds: token=git_token, credentials=creds
    if ("_" in inner or re.search(r"[a-z][A-Z]", inner)) and not re.search(r"\d", inner):
        return True  # snake_case or camelCase: a variable
    return key.rstrip().endswith(":") and key.endswith(" ") and rest.lstrip()[:1] in (",", ")", "}")  # auth: state,


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", text)}


def _lines_with(needles: tuple[str, ...], lowered: str) -> list[tuple[int, int]]:
    """The lines (start, end) that hold one of ``needles``, found by substring search; merged, in order."""
    found: list[tuple[int, int]] = []
    for needle in needles:
        at = lowered.find(needle)
        while at >= 0:
            start, end = lowered.rfind("\n", 0, at) + 1, lowered.find("\n", at)
            found.append((start, len(lowered) if end < 0 else end))
            at = lowered.find(needle, found[-1][1])
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _in_context(text: str, lowered: str) -> str:
    spans = []
    for needles, pattern in IN_CONTEXT:
        # a one-line pattern runs on the lines that hold its needle only: most code has none of them
        regions = [(0, len(text))] if "?\\n" in pattern.pattern else _lines_with(needles, lowered)
        for match in (m for start, end in regions for m in pattern.finditer(text, start, end)):
            value = match.group("s")
            inner = value.strip("\"'")
            if MARK not in value and not PLACEHOLDER.match(inner):
                spans.append(match.span("s"))
    return _mark_spans(text, spans)


def _secret_data(text: str) -> str:
    """Every value under ``data:`` / ``stringData:`` of a Kubernetes Secret (base64 of anything)."""
    spans = [(body.start("body") + value.start("s"), body.start("body") + value.end("s"))
             for body in _SECRET_DATA.finditer(text) for value in _DATA_VALUE.finditer(body.group("body"))
             if MARK not in value.group("s")]
    return _mark_spans(text, spans)


def _names(text: str, library: _Library | None) -> str:
    """``name = value`` secrets, line by line, on the lines that mention a secret-like name."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not NAME_HINT.search(line):
            continue
        line = ASSIGNMENT.sub(_assignment, line)
        for value in library.keyword_values(line) if library is not None else ():
            if len(value) < MIN_SECRET_CHARS or PLACEHOLDER.match(value) or MARK in value or _a_name(value):
                continue
            quoted = [f"{q}{value}{q}" for q in "\"'" if f"{q}{value}{q}" in line]
            for text in quoted or [value]:  # the quoted value, not the same letters in a name
                line = line.replace(text, text[0] + MARK + text[-1] if quoted else MARK)
        lines[number] = line
    return "\n".join(lines)


#: A JSON escape of a character a token is made of (``\u0073k_live_...``): read as that character first,
#: so an escaped key is found like a plain one (quotes and backslashes stay escaped: the JSON stays JSON).
_ESCAPED = lazy_pattern(r"\\u00(3[0-9]|4[1-9a-fA-F]|5[0-9aA]|6[1-9a-fA-F]|7[0-9aA]|2[bdefBDEF]|5[fF]|3[aAdD])")


def redact(text: str) -> str:
    """``text`` with API keys, tokens, private keys, passwords and other credentials replaced by ``[REDACTED]``."""
    if not text:
        return text
    if "\\u00" in text:
        text = _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)
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
    if "kind: secret" in text.lower():
        text = _secret_data(text)
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
