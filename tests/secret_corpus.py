"""Secrets in realistic surroundings, and ordinary code that must stay readable.

Each sample is a kind of secret inside the text it usually sits in (code, a shell
command, a config file, a URL, a log line) and the values that must never be seen
after redaction. The values are made up but have the real shapes; they are built from
pieces so that no scanner mistakes this file for a leak.
"""

from __future__ import annotations

from dataclasses import dataclass


def _rep(piece: str, length: int) -> str:
    return (piece * (length // len(piece) + 1))[:length]


@dataclass(frozen=True)
class Sample:
    kind: str
    text: str
    secrets: tuple[str, ...]


_STRIPE = "sk_" + "live_" + "51HqT9kLmNoPqRsTuVwXyZaB" + "cDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdEF"
_PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q2Yz9x8wPlKs"

CORPUS: tuple[Sample, ...] = (
    Sample("stripe secret key", f'stripe.api_key = "{_STRIPE}"\ncharge = stripe.Charge.create(amount=100)', (_STRIPE,)),
    Sample("stripe restricted key (env)", "STRIPE_RESTRICTED=" + "rk_" + "live_" + _rep("aZ09", 40), ("rk_" + "live_" + _rep("aZ09", 40),)),
    Sample("hugging face token", "from huggingface_hub import login\nlogin(\"hf_" + _rep("QwErTyUiOp", 34) + "\")",
           ("hf_" + _rep("QwErTyUiOp", 34),)),
    Sample("npm token in .npmrc", "//registry.npmjs.org/:_authToken=npm_" + _rep("a1B2c3D4e5", 36) + "\nalways-auth=true",
           ("npm_" + _rep("a1B2c3D4e5", 36),)),
    Sample("npm token in a shell", "export NPM_TOKEN=npm_" + _rep("Zx9Yw8Vu7T", 36) + " && npm publish", ("npm_" + _rep("Zx9Yw8Vu7T", 36),)),
    Sample("sendgrid key", "sg = SendGridAPIClient('SG." + _rep("abcDEF123_", 22) + "." + _rep("xyzXYZ789-", 43) + "')",
           (_rep("abcDEF123_", 22), _rep("xyzXYZ789-", 43))),
    Sample("DB_PASS in .env", "DB_HOST=db.internal\nDB_USER=app\nDB_PASS=Winter2024!x\nDB_NAME=app", ("Winter2024!x",)),
    Sample("mysql -p on a command line", "$ mysql -uroot -pS3cr3tRootPw -h 127.0.0.1 shop < dump.sql", ("S3cr3tRootPw",)),
    Sample("curl -u user:pass", "curl -u deploy:Xk2!pQ9zLm -X POST https://ci.example.com/job/build", ("Xk2!pQ9zLm",)),
    Sample("--password X", "pg_restore --host db --username admin --password Hunter2Hunter2 backup.dump", ("Hunter2Hunter2",)),
    Sample("--password=X", "docker login --username bot --password=Dk9#mQ2vLp registry.example.com", ("Dk9#mQ2vLp",)),
    Sample("redis url with empty user", "REDIS_URL=redis://:r3disPassw0rd@cache.internal:6379/0", ("r3disPassw0rd",)),
    Sample("postgres url", "engine = create_engine('postgresql://app:Pg_s3cret_99@db:5432/app')", ("Pg_s3cret_99",)),
    Sample("authorization basic header", "GET /api/v1/items HTTP/1.1\nHost: api.example.com\nAuthorization: Basic ZGVwbG95OlhrMiFwUTl6TG0=",
           ("ZGVwbG95OlhrMiFwUTl6TG0=",)),
    Sample("authorization bearer in a log", "2026-03-02 10:14:10 DEBUG sending headers={'Authorization': 'Bearer " + _rep("Tk7", 40) + "'}",
           (_rep("Tk7", 40),)),
    Sample("docker config auth", '{\n  "auths": {\n    "https://index.docker.io/v1/": {\n      "auth": "Ym90OkRrOSNtUTJ2THBkb2NrZXI="\n    }\n  }\n}',
           ("Ym90OkRrOSNtUTJ2THBkb2NrZXI=",)),
    Sample("kubeconfig client-key-data", "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTg==\n"
           "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB\n",
           ("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB",)),
    Sample("kubeconfig token", "users:\n- name: ci\n  user:\n    token: kUb3T0k3n.a1b2c3d4e5f6g7h8", ("kUb3T0k3n.a1b2c3d4e5f6g7h8",)),
    Sample("openai key", "client = OpenAI(api_key=\"sk-proj-" + _rep("Ab3dEf6hIj", 48) + "\")", ("sk-proj-" + _rep("Ab3dEf6hIj", 48),)),
    Sample("anthropic key", "export ANTHROPIC_API_KEY=sk-ant-api03-" + _rep("Qw3rTy", 90), ("sk-ant-api03-" + _rep("Qw3rTy", 90),)),
    Sample("github token", "git clone https://x-access-token:ghp_" + _rep("aB1cD2eF3g", 36) + "@github.com/org/repo.git",
           ("ghp_" + _rep("aB1cD2eF3g", 36),)),
    Sample("gitlab token", "PRIVATE-TOKEN: glpat-" + _rep("xY7zW6vU5t", 20), ("glpat-" + _rep("xY7zW6vU5t", 20),)),
    Sample("aws keys", "[default]\naws_access_key_id = AKIA" + "Z7QWERTYUIOPASDF" + "\naws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8kLm3nOp",
           ("AKIA" + "Z7QWERTYUIOPASDF", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8kLm3nOp")),
    Sample("slack bot token", "SLACK_BOT_TOKEN: xoxb-" + "123456789012-1234567890123-" + _rep("AbCdEf", 24),
           ("xoxb-" + "123456789012-1234567890123-" + _rep("AbCdEf", 24),)),
    Sample("slack webhook", "notify(url='https://hooks.slack.com/services/" + "T0A1B2C3D/B4E5F6G7H/" + _rep("q1W2e3R4", 24) + "')",
           (_rep("q1W2e3R4", 24),)),
    Sample("google api key", "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AIza" + _rep("SyD4-9xQ_", 35),
           ("AIza" + _rep("SyD4-9xQ_", 35),)),
    Sample("jwt in a log", "INFO auth ok user=42 jwt=eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiI0MiIsInJvbGUiOiJhZG1pbiJ9." + "Zx8Kq2Lm9Pn4Rs7Tu0VwXyAbCdEfGh",
           ("Zx8Kq2Lm9Pn4Rs7Tu0VwXyAbCdEfGh",)),
    Sample("pem private key", "key = '''-----BEGIN PRIVATE KEY-----\n" + _PEM_BODY + "\n-----END PRIVATE KEY-----'''", (_PEM_BODY,)),
    Sample("service account json", '{"type": "service_account", "project_id": "app-1", "private_key_id": "' + _rep("9f8e7d6c5b", 40)
           + '", "private_key": "-----BEGIN PRIVATE KEY-----\\n' + _PEM_BODY + '\\n-----END PRIVATE KEY-----\\n"}',
           (_PEM_BODY, _rep("9f8e7d6c5b", 40))),
    Sample("python password literal", 'def connect():\n    return db.connect(user="app", password="Tr0ub4dor&3x")', ("Tr0ub4dor&3x",)),
    Sample("yaml secret", "database:\n  host: db\n  password: 'c0rrect-h0rse-battery'\n", ("c0rrect-h0rse-battery",)),
    Sample("netrc", "machine api.example.com login deploy password Nt9rcS3cret", ("Nt9rcS3cret",)),
    Sample("sshpass", "sshpass -p 'Ssh!Pass42' ssh root@10.0.0.5 uptime", ("Ssh!Pass42",)),
    Sample("azure connection string",
           "DefaultEndpointsProtocol=https;AccountName=store1;AccountKey=" + _rep("Qm9vZ1", 86) + "==;EndpointSuffix=core.windows.net",
           (_rep("Qm9vZ1", 86),)),
    Sample("twilio auth token", 'TWILIO_AUTH_TOKEN="' + _rep("0a1b2c3d4e", 32) + '"', (_rep("0a1b2c3d4e", 32),)),
    Sample("telegram bot token", "bot = telebot.TeleBot('123456789:" + _rep("AAHk-9xQ_z", 35) + "')", (_rep("AAHk-9xQ_z", 35),)),
    Sample("pypi token", "TWINE_PASSWORD=pypi-AgEIcHlwaS5vcmc" + _rep("CJDk3-_x9", 80), ("pypi-AgEIcHlwaS5vcmc" + _rep("CJDk3-_x9", 80),)),
    Sample("signed url", "https://bucket.s3.amazonaws.com/f.zip?X-Amz-Credential=AKIA" + "Q2W3E4R5T6Y7U8I9"
           + "%2F20260302&X-Amz-Signature=" + _rep("ab12cd34ef", 64), (_rep("ab12cd34ef", 64),)),
    Sample("x-api-key header", "curl -H 'X-Api-Key: k3y_" + _rep("Rt5Yh7", 30) + "' https://api.example.com/v2/report",
           ("k3y_" + _rep("Rt5Yh7", 30),)),
    Sample("random quoted secret", "SESSION_SIGNING = \"" + "q8Zr3LmT0vXy2BnW6kP9sD1fG4hJ7aQeRtYuIoPl" + "\"",
           ("q8Zr3LmT0vXy2BnW6kP9sD1fG4hJ7aQeRtYuIoPl",)),
    Sample("PGPASSWORD in a shell", "PGPASSWORD=pgS3cr3t! psql -h db -U app -c 'select 1'", ("pgS3cr3t!",)),
    Sample("--token on a command line", "gh auth login --with-token --token tkN8mQ2vLpZx7", ("tkN8mQ2vLpZx7",)),
)

#: Ordinary code and prose: redaction must leave each exactly as it is.
ORDINARY: tuple[str, ...] = (
    "def login(user: str, password: str) -> Session:",
    "if not secret:\n    raise ConfigError('missing secret')",
    "if not token: raise AuthError()",
    "if not token:\n    raise AuthError()",
    "token = get_token()",
    "password = self.password",
    "api_key = os.environ['OPENROUTER_API_KEY']",
    "the tokenizer splits words into tokens",
    "max_tokens=4096",
    "api_key_env: OPENROUTER_API_KEY",
    "token: 500",
    "password=${DB_PASSWORD}",
    "-----BEGIN PUBLIC KEY-----",
    "class TokenError(Exception):\n    pass",
    "for token in tokens:\n    yield token",
    "secret_manager.get(name)",
    "git commit -m 'rotate the password hashing' && git push",
    "See docs/secrets.md for how keys are stored.",
    "headers = {'Authorization': f'Bearer {token}'}",
    "assert user.password_hash != password",
)
