"""The pack's own secret patterns: the shapes detect-secrets has no plugin for.

Each pattern marks a span to replace: the whole match, or only its group named ``s``
(the secret) so the words around it stay readable (``--password [REDACTED]``).
detect-secrets covers the rest (see :mod:`org.kernel.redact`); what is here fills its
gaps: newer token formats (Stripe keys longer than its 24 characters, Hugging Face,
npm, ...), secrets on command lines and in HTTP headers, Docker and kubeconfig files,
URLs with an empty user name, and ``NAME=value`` lines without quotes.
"""

from __future__ import annotations

import re

from org.lazy_patterns import lazy_pattern

#: Values that are never secrets: numbers, variables and placeholders, masks.
PLACEHOLDER = lazy_pattern(
    r"^(?:\d+(?:\.\d+)?|[\^~>=<v]{0,3}\d+(?:\.[\dx*]+){1,3}(?:[-+][\w.]+)?|\$.*|<.*|\{.*|%.*|\*+|x+|X+|\.\.\.|…|none|null|nil|true|false|yes|no|on|off|undefined|changeme"
    r"|os\.environ.*|getenv.*|env\(.*|process\.env.*|\[redacted\].*)$",
    re.IGNORECASE,
)
#: An unquoted value that is code, not a secret: a keyword or a type.
CODE_VALUE = lazy_pattern(
    r"^(?:raise|return|pass|continue|break|not|and|or|in|is|if|else|elif|await|async|lambda|yield|def|class|import|from"
    r"|self|cls|this|str|int|float|bool|bytes|dict|list|tuple|set|object|any|Any|string|number|boolean|Optional.*|Union.*"
    r"|Secret[A-Za-z]*|SecretStr|None|True|False|required|optional|string\(.*)$"
)
#: A value read from elsewhere: a name or an attribute (``creds``, ``self.password``), or the start of a
#: call or an index (``request.json.get(``, ``os.environ[``); the group is the name.
IDENTIFIER = lazy_pattern(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)([(\[].*)?$")
#: A quoted value naming an environment variable (``"AUTH_PASSWORD"``), a file (``usr/secrets.env``) or a
#: dotted name (``"comment.line"``); taken for a name only when it does not look random.
NAME_VALUE = lazy_pattern(r"^(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[\w.\-]+(?:/[\w.\-]+)+|[A-Za-z_][\w\-]*(?:\.[\w\-]+)+)$")
#: Strings of consecutive symbols (an alphabet in code), never random.
SEQUENCE = lazy_pattern(r"abcdefgh|ABCDEFGH|01234567", re.IGNORECASE)
#: A value with this much randomness is a secret even when it has the shape of code (``kUb3T0k3n.a1b2c3``).
RANDOM_LOOKING = lazy_pattern(r"\d.*\d.*\d|(?=.*[a-z])(?=.*[A-Z])(?=.*\d)")

_NAMES = (
    # long names whatever comes before them (PGPASSWORD, DB_PASSWORD, githubToken) ...
    # (every run is bounded: an unbounded one costs the square of a long run of name characters)
    r"(?:[a-z0-9_.\-]{0,40}?(?:password|passwd|passphrase|secret[_\-]?key[_\-]?base|secret|token|api[_\-]?key|apikey"
    r"|access[_\-]?key|private[_\-]?key|app[_\-]?key|license[_\-]?key"
    r"|credentials?|client-key-data|signing[_\-]?key|encryption[_\-]?key|master[_\-]?key|session[_\-]?key)"
    # ... short ones only as a whole word or after a separator (DB_PASS, MYSQL_PWD; not bypass, compass)
    r"|(?:[a-z0-9]{1,30}[_.\-]){0,4}(?:pass|pwd|pw|auth|key-data|sig))"
)

#: ``name = value`` and ``name: value`` where the name says secret; quoted values may hold spaces.
ASSIGNMENT = lazy_pattern(
    r"(?i)(?<![A-Za-z0-9])(?P<key>[\"']?" + _NAMES + r"[\"']?[ \t]*(?::=|=>|=|:)[ \t]*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;\"'`)\]}]+)"
)

#: Tokens recognisable by their shape alone (whole match replaced), each with the literal
#: pieces (lower case) one of which the text must hold: a substring test is far cheaper than a scan.
TOKENS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (needles, lazy_pattern(pattern))
    for needles, pattern in (
        (("sk-",), r"\bsk-[A-Za-z0-9_\-]{16,}"),  # OpenAI, OpenRouter (sk-or-...), Anthropic (sk-ant-...)
        (("k_live_", "k_test_"), r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{10,}"),  # Stripe secret, restricted and publishable keys
        (("whsec_",), r"\bwhsec_[0-9A-Za-z]{16,}"),  # Stripe webhook secrets
        (("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),  # Hugging Face
        (("npm_",), r"\bnpm_[A-Za-z0-9]{30,}"),  # npm
        (("pypi-",), r"\bpypi-[A-Za-z0-9_\-]{50,}"),  # PyPI
        (("sg.",), r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),  # SendGrid
        (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
        (("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{20,}"),  # GitHub fine-grained tokens
        (("glpat-", "glrt-", "gldt-", "glcbt-", "glptt-", "glft-", "glsoat-", "glimt-", "gloas-", "glagent-"),
         r"\bgl(?:pat|rt|dt|cbt|ptt|ft|soat|imt|oas|agent)-[A-Za-z0-9_\-]{20,}"),  # GitLab tokens, whole
        (("hvs.", "hvb.", "hvr."), r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),  # HashiCorp Vault
        (("hrku-",), r"\bHRKU-[A-Za-z0-9_\-]{30,}"),  # Heroku
        (("nrak-", "nrii-", "nrjs-", "nral-"), r"\bNR(?:AK|II|JS|AL)-[A-Za-z0-9]{20,}"),  # New Relic
        (("dckr_pat_", "dckr_oat_"), r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}"),  # Docker Hub
        (("ssws",), r"(?<=SSWS )[A-Za-z0-9_\-]{20,}"),  # Okta API tokens
        (("akia", "asia"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
        (("xox",), r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
        (("xapp-",), r"\bxapp-[0-9]-[A-Za-z0-9\-]{10,}"),  # Slack app tokens
        (("hooks.slack.com",), r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"),  # Slack webhooks
        (("/api/webhooks/",), r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+"),  # Discord webhooks
        (("eyj",), r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWTs
        (("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}"),  # Google API keys
        (("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}"),  # Google OAuth access tokens
        (("dop_v1_",), r"\bdop_v1_[a-f0-9]{64}"),  # DigitalOcean
        (("shpat_", "shpca_", "shppa_", "shpss_"), r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),  # Shopify
        (("dapi",), r"\bdapi[a-f0-9]{32}"),  # Databricks
        (("pmak-",), r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}"),  # Postman
        (("lin_api_",), r"\blin_api_[A-Za-z0-9]{40}"),  # Linear
        (("dp.",), r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),  # Doppler
        (("age-secret-key-1",), r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}"),  # age private keys
        (("secret_",), r"\bsecret_[A-Za-z0-9]{43}\b"),  # Notion integrations
    )
)

#: Secrets inside a larger text, the secret being the group ``s``; with their needles, as above.
IN_CONTEXT: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (needles, lazy_pattern(pattern))
    for needles, pattern in (
        # Authorization headers, whatever the scheme; also bare ``Bearer <token>``
        (("authorization",),
         r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|bearer|token|digest|apikey|negotiate|ssws)\s+)?(?P<s>[^\s\"',;]{6,})"),
        (("bearer", "basic"), r"(?i)\b(?:bearer|basic)\s+(?P<s>[A-Za-z0-9._~+/\-]{16,}=*)"),
        (("api-key", "auth-token", "access-token", "private-token", "auth-key", "job-token", "license-key"),
         r"(?i)\b(?:x-api-key|x-auth-token|api-key|x-access-token|private-token|x-auth-key|job-token|x-license-key)[\"']?\s*[:=]\s*[\"']?"
         r"(?P<s>[^\s\"',;]{6,})"),
        # XML settings (Maven, NuGet, ...): <password>x</password>
        (("<password>", "<passphrase>", "<token>", "<secret>", "<apikey>", "<privatekey>"),
         r"(?i)<(password|passphrase|token|secret|apiKey|privateKey)>(?P<s>[^<\n]{3,200})</\1>"),
        (("_authtoken=",), r"(?i)_authToken=(?P<s>[^\s\"']{6,})"),  # .npmrc
        (("dockerconfigjson", "dockercfg"), r"\.docker(?:configjson|cfg)[\"']?\s*:\s*[\"']?(?P<s>[A-Za-z0-9+/=]{16,})"),
        # .pgpass: host:port:database:user:password
        ((":",), r"(?m)^[\w.\-*]{1,253}:(?:\d{1,5}|\*):[\w.\-*]{1,63}:[\w.\-*@]{1,63}:(?P<s>\S{3,})$"),
        # PuTTY private key lines and MAC
        (("private-lines:",), r"Private-Lines:[ \t]*\d+[ \t]*\r?\n(?P<s>(?:[A-Za-z0-9+/=]{1,200}\r?\n?){1,100}(?:Private-(?:MAC|Hash):[ \t]*[0-9a-fA-F]+)?)"),
        # passwords of database and directory clients: redis-cli -a, mongosh -p, ldapsearch -w, sqlcmd -P, smbclient -U u%pw
        (("redis-cli", "mongo", "ldap", "sqlcmd", "bcp", "smbclient", "rpcclient", "mount"),
         r"\b(?:redis-cli\b[^\n|;&]{0,200}?\s-a|mongo(?:sh|dump|restore|export|import)?\b[^\n|;&]{0,200}?\s-p|ldap\w{0,12}\b[^\n|;&]{0,200}?\s-w"
         r"|(?:sqlcmd|bcp)\b[^\n|;&]{0,200}?\s-P)\s*(?P<s>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"'-][^\s\"']{0,200})"),
        (("smbclient", "rpcclient", "-u "), r"\b(?:smbclient|rpcclient|smbmap|crackmapexec)\b[^\n|;&]{0,200}?\s(?:-U|--user(?:name)?=?)\s*[\"']?[^\s%\"']{1,64}%(?P<s>[^\s\"']{1,200})"),
        # cookies on a command line: curl -b 'session=...', --cookie
        (("-b", "--cookie"), r"(?:\s-b|--cookie)[ =]\s*[\"']?(?:[\w.\-]{1,64}=[^;\s\"']{0,4096};\s*)*[\w.\-]{1,64}=(?P<s>[^;\s\"']{6,})"),
        # echo SECRET | docker login --password-stdin (and helm, podman, ...)
        (("password-stdin",), r"\becho\s+(?:-n\s+)?(?P<s>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s|]{1,200})\s*\|\s*[\w-]{1,20}\s+(?:\w+\s+)?login\b[^\n]{0,200}--password-stdin"),
        # prose: "the password is X", "password was: X"
        (("password", "passphrase", "passcode", "pin is", "secret is", "token is"),
         r"(?i)\b(?:password|passphrase|passcode|pin|secret|token)\s+(?:is|was|will be)\s*:?\s*[\"'`]?"
         r"(?!(?:stored|set|saved|required|empty|missing|wrong|correct|invalid|incorrect|expired|hashed|encrypted|not|the|a|an|in|on|being|too"
         r"|now|also|still|only|never|always|sent|given|used|changed|reset|rotated|ok|fine|valid|generated|read|kept|available|defined)\b)"
         r"(?P<s>[^\s\"'`.,;:)]{4,})"),
        # user:password@ in URLs, the user name may be empty (redis://:pw@host)
        (("://",), r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:(?P<s>[^\s@/]+)@"),
        # curl -u user:pass, --user user:pass (the password part)
        (("-u", "--user", "--proxy-user"), r"(?:\s-u\s*|--user[= ]\s*|--proxy-user[= ]\s*)[\"']?[^\s:\"']+:(?P<s>[^\s\"']+)"),
        # mysql -pSECRET (no space: with a space mysql asks for it)
        (("mysql",), r"\bmysql(?:dump|admin|import|sh|check)?\b[^\n|;&]{0,200}?\s-p(?P<s>[^\s\"']+|\"[^\"\n]*\"|'[^'\n]*')"),
        # --password X, --password=X, --token X, --api-key X, ...
        (("-pass", "-token", "-secret", "-api", "-access", "-auth", "-client"),
         r"(?i)(?<![\w-])--?(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-?key|access-?key|auth-?token|client-?secret)"
         r"(?:=|\s+)(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'-][^\s\"']*)"),
        (("sshpass",), r"\bsshpass\s+-p\s*(?P<s>\S+)"),
        # .netrc: machine host login user password secret
        (("machine",), r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<s>\S+)"),
        # query strings: ?access_token=...&sig=...
        (("?", "&"),
         r"(?i)[?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|sig|signature|x-amz-signature|x-amz-credential"
         r"|password|secret)=(?P<s>[^&\s\"'#]{6,})"),
        # connection strings: AccountKey=...; SharedAccessKey=...;
        (("accountkey", "sharedaccess"), r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<s>[^;\s\"']+)"),
        # Azure DevOps personal access tokens: 52 characters of base32, or the newer 84 with AZDO in them
        (("azure", "visualstudio", "azdo", "_pat", "pat="),
         r"(?<![A-Za-z0-9])(?P<s>[a-z2-7]{52}|[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})(?![A-Za-z0-9])"),
    )
)

#: Lines that can hold a ``name = value`` secret: the others are not scanned for one.
NAME_HINT = lazy_pattern(r"(?i)pass|pwd|pw\b|secret|key|token|auth|cred|sig\b|contrase")
#: A quoted value that is a content hash, not a secret: Subresource Integrity (lockfiles, <script integrity>).
HASH_VALUE = lazy_pattern(r"^(?:sha(?:1|256|384|512)|md5)-[A-Za-z0-9+/=_\-]+$")
#: Words that say a quoted hex string on the line is a hash or an id, not a secret.
HASH_CONTEXT = lazy_pattern(r"(?i)sha\d*|md5|hash|checksum|digest|integrity|commit|etag|revision|\brev\b|uuid|\bid\b|_id\b|fingerprint|crc")


def present(needles: tuple[str, ...], lowered: str) -> bool:
    return any(needle in lowered for needle in needles)


__all__ = ["ASSIGNMENT", "CODE_VALUE", "HASH_CONTEXT", "HASH_VALUE", "IDENTIFIER", "IN_CONTEXT", "NAME_HINT", "NAME_VALUE", "SEQUENCE", "PLACEHOLDER", "RANDOM_LOOKING", "TOKENS", "present"]
