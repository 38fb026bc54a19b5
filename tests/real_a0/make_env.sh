#!/usr/bin/env bash
# Build a small Python 3.12 environment that can run one Agent-Zero chat turn (model
# libraries for embeddings and speech are replaced by stubs; a turn does not use them).
#
#   tests/real_a0/make_env.sh A0_TREE VENV_DIR [PYTHON3.12]
#
# Then run the real-Agent-Zero tests with:
#   A0ORG_TEST_A0_ROOT=A0_TREE A0ORG_TEST_A0_PYTHON=VENV_DIR/bin/python python -m pytest tests/test_real_agent_zero.py
set -euo pipefail
tree="$1"; venv="$2"; python="${3:-python3.12}"
here="$(cd "$(dirname "$0")" && pwd)"
if [ -f "$tree/helpers/extension.py" ]; then reqs="$here/requirements-v1.x.txt"; else reqs="$here/requirements-v0.9.8.txt"; fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -r "$reqs"
if [ "$reqs" = "$here/requirements-v0.9.8.txt" ]; then
  "$venv/bin/python" -m pip install --quiet --no-deps browser-use==0.5.11
fi
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$site/sentence_transformers" "$site/whisper"
cat > "$site/sentence_transformers/__init__.py" <<'PY'
# Stub: Agent-Zero imports SentenceTransformer at module level; a chat turn with memory off never uses it.
class SentenceTransformer:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("sentence_transformers is a stub in this test environment")
PY
cat > "$site/whisper/__init__.py" <<'PY'
# Stub: Agent-Zero imports whisper at module level; speech-to-text is never used in a chat turn.
def load_model(*args, **kwargs):
    raise RuntimeError("whisper is a stub in this test environment")
PY
echo "ready: $venv"
