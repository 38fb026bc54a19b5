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

#: Kinds that leaked before the redactor was made complete: tokens of more services, secrets in
#: command-line flags, config formats and prose, positional keys, hex and random strings.
_HEX32 = "9f3c2a7b" + "e41d5f60" + "8a9b0c1d" + "2e3f4a5b"
_RANDOM32 = "Qz7" + "Lm2Xc9Vb4Nn8Rt5Yw1Kp6Hg3Jd0Fs"
MORE: tuple[Sample, ...] = (
    Sample("azure devops pat", "git clone https://build:" + _rep("a2b3c4d5e6", 52) + "@dev.azure.com/org/p/_git/r\n"
           "AZURE_DEVOPS_EXT_PAT=" + _rep("q7w2e3r4t5", 52), (_rep("a2b3c4d5e6", 52), _rep("q7w2e3r4t5", 52))),
    Sample("vault token", "export VAULT_ADDR=https://vault:8200\nvault login hvs." + _rep("CAESIJk9x", 90), ("hvs." + _rep("CAESIJk9x", 90),)),
    Sample("heroku api key", "heroku config:set X=1 --app shop\nHEROKU_API_KEY: HRKU-" + _rep("AAbB12_-cd", 60),
           ("HRKU-" + _rep("AAbB12_-cd", 60),)),
    Sample("cloudflare x-auth-key", "curl -H 'X-Auth-Email: ops@shop.example' -H 'X-Auth-Key: " + _rep("c2f4a6b8d0", 37) + "' https://api.cloudflare.com",
           (_rep("c2f4a6b8d0", 37),)),
    Sample("new relic key", "newrelic.license_key = 'NRAK-" + _rep("A1B2C3D4E5", 27) + "'", ("NRAK-" + _rep("A1B2C3D4E5", 27),)),
    Sample("okta ssws", "curl -H \"Authorization: SSWS 00" + _rep("Xk9Lm2Pq4R", 40) + "\" https://shop.okta.com/api/v1/users",
           ("00" + _rep("Xk9Lm2Pq4R", 40),)),
    Sample("docker hub pat", "echo dckr_pat_" + _rep("Zr8Tq3Wm1X", 27) + " > token.txt", ("dckr_pat_" + _rep("Zr8Tq3Wm1X", 27),)),
    Sample("twilio positional", "client = Client(\"AC" + _HEX32 + "\", \"" + _rep("7e8f9a0b1c", 32) + "\")", (_rep("7e8f9a0b1c", 32),)),
    Sample("algolia positional", "client = algoliasearch('QWERTY1234', '" + _rep("d4e5f6a7b8", 32) + "')", (_rep("d4e5f6a7b8", 32),)),
    Sample("laravel app key", "APP_NAME=Shop\nAPP_KEY=base64:" + _rep("Jk3Lm9Qx2Wv8", 44) + "\nAPP_DEBUG=false", (_rep("Jk3Lm9Qx2Wv8", 44),)),
    Sample("rails secret_key_base", "production:\n  secret_key_base: " + _rep("5e6f7a8b9c", 128) + "\n", (_rep("5e6f7a8b9c", 128),)),
    Sample("maven settings password", "<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>Mvn!Pw9zQ</password>\n</server>",
           ("Mvn!Pw9zQ",)),
    Sample(".dockerconfigjson", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: eyJhdXRocyI6"
           + _rep("eyJyZWdpc3RyeSI6", 48) + "\n", ("eyJhdXRocyI6" + _rep("eyJyZWdpc3RyeSI6", 48),)),
    Sample(".pgpass", "db.internal:5432:shop:app:Pg9PassWord!\n*:*:*:replica:R3pl1ca", ("Pg9PassWord!", "R3pl1ca")),
    Sample("putty key", "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 1\nAAAAB3NzaC1yc2E\n"
           "Private-Lines: 2\n" + _rep("AAABAQCx9", 64) + "\n" + _rep("Zk2Lp8Qr", 40) + "\nPrivate-MAC: " + _rep("ab12", 40),
           (_rep("AAABAQCx9", 64), _rep("Zk2Lp8Qr", 40))),
    Sample("kubernetes secret data", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: shop\ndata:\n  DB_URL: " + _rep("cG9zdGdyZXM6", 40)
           + "\n  STRIPE: " + _rep("c2tfbGl2ZV8", 44) + "\n", (_rep("cG9zdGdyZXM6", 40), _rep("c2tfbGl2ZV8", 44))),
    Sample("redis-cli -a", "redis-cli -h cache -a R3d1sPw0rd! ping", ("R3d1sPw0rd!",)),
    Sample("mongosh -p", "mongosh \"mongodb://db/shop\" -u admin -p M0ng0Pw9z --authenticationDatabase admin", ("M0ng0Pw9z",)),
    Sample("ldapsearch -w", "ldapsearch -x -D cn=admin,dc=shop -w Ld4pS3cret -b dc=shop", ("Ld4pS3cret",)),
    Sample("sqlcmd -P", "sqlcmd -S db -U sa -P 'Sq1!Pass99' -Q 'select 1'", ("Sq1!Pass99",)),
    Sample("smbclient -U user%pw", "smbclient //files/share -U backup%Smb9Pw!x -c ls", ("Smb9Pw!x",)),
    Sample("curl -b session", "curl -b 'session=" + _rep("s3ss10nK", 32) + "' https://shop.example/admin", (_rep("s3ss10nK", 32),)),
    Sample("docker login password-stdin", "echo Dh9!pat9Qz | docker login -u bot --password-stdin", ("Dh9!pat9Qz",)),
    Sample("password in prose", "Use the staging admin; the password is Tr1cky!Pw and the user is admin.", ("Tr1cky!Pw",)),
    Sample("gitlab runner token", "token = \"glrt-" + _rep("t3xZ_9Kq", 24) + "\"", ("glrt-" + _rep("t3xZ_9Kq", 24), _rep("t3xZ_9Kq", 24))),
    Sample("gitlab deploy token", "GITLAB_DEPLOY=gldt-" + _rep("Yh7-Jk3L", 24), (_rep("Yh7-Jk3L", 24),)),
    Sample("gitlab job token", "curl --header \"JOB-TOKEN: glcbt-64_" + _rep("Mn4_Bv6C", 24) + "\" https://gitlab.example/api",
           (_rep("Mn4_Bv6C", 24),)),
    Sample("hex secret", "WEBHOOK_SIGNING = '" + _HEX32 + _HEX32 + "'", (_HEX32 + _HEX32,)),
    Sample("32-character random string", "client.configure(\"" + _RANDOM32 + "\")", (_RANDOM32,)),
)
#: Files no supervisor may read, whatever redaction would leave of them.
MORE_CREDENTIAL_FILES = ("/root/.bash_history", "/home/app/.zsh_history", "/root/.config/gh/hosts.yml",
                         "/root/.config/rclone/rclone.conf", "/root/.pip/pip.conf", "/root/.config/pip/pip.conf",
                         "/root/.python_history", "/root/.psql_history", "/root/.local/share/fish/fish_history")

#: Secret-free code that must stay exactly as it is: values read from elsewhere, calls, lockfile hashes.
MORE_ORDINARY: tuple[str, ...] = (
    'api_key = request.json.get("api_key")',
    "token := idp.sign(t, claims)",
    "secret := cfg.Secret()",
    "password = settings.get_password(user)",
    "self.api_key = kwargs.get('api_key') or os.getenv('API_KEY')",
    '"integrity": "sha512-' + _rep("Xy9+AbC/dEf0", 86) + '==",',
    '<script src="https://cdn.example/x.js" integrity="sha384-' + _rep("oqVuAfXRKap7fdgc", 64) + '" crossorigin="anonymous"></script>',
    "const token = await auth.getToken({ scope })",
    "the password is stored hashed with argon2",
    "commit 3f9c2a7be41d5f608a9b0c1d2e3f4a5b6c7d8e9f",
)
