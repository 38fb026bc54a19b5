#!/usr/bin/env bash
# Run the tests that drive a real Agent-Zero, against the release archives, in one command:
#
#   bash tests/real_a0/run.sh [VERSION ...] [-- PYTEST_ARGS ...]
#
# VERSION is a release whose archive agent-zero-VERSION.tar.gz lies in the archive folder
# (default: v1.7 and v0.9.8.2). For each: the archive is checked against SHA256SUMS, unpacked to a
# work folder, given a Python 3.12 environment from the package index (make_env.sh), and
# `python -m pytest -m real_a0` runs with A0ORG_TEST_A0_ROOT/A0ORG_TEST_A0_PYTHON pointing at it.
# Any failure fails the run.
#
#   A0ORG_A0_ARCHIVES  the archive folder (default: ../shared/agent-zero beside the repository)
#   A0ORG_A0_CACHE     keep the trees and environments here and reuse them while the archive,
#                      make_env.sh and the requirements are unchanged (default: a temporary
#                      folder, removed at the end)
#   A0ORG_A0_PYTHON312 the Python 3.12 to build the environments with (default: found on PATH
#                      or under ~/.pyenv)
#   PYTHON             the Python that runs pytest, with the pack's test dependencies (default: python)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
archives="${A0ORG_A0_ARCHIVES:-$repo/../shared/agent-zero}"
runner="${PYTHON:-python}"

versions=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do versions+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#versions[@]} -gt 0 ] || versions=(v1.7 v0.9.8.2)
pytest_args=("$@")
[ ${#pytest_args[@]} -gt 0 ] || pytest_args=(-q -n 2)

if [ ! -f "$archives/SHA256SUMS" ]; then
  echo "real Agent-Zero tests: no archives in $archives (set A0ORG_A0_ARCHIVES to the folder holding agent-zero-<version>.tar.gz and SHA256SUMS)" >&2
  exit 3
fi
archives="$(cd "$archives" && pwd)"

find_python312() {
  local candidate
  for candidate in "${A0ORG_A0_PYTHON312:-}" python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python /usr/local/bin/python3.12 /usr/bin/python3.12; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
      "$candidate" -c 'import sys; print(sys.executable)'
      return 0
    fi
  done
  return 1
}
python312="$(find_python312)" || { echo "real Agent-Zero tests: Python 3.12 is required (set A0ORG_A0_PYTHON312)" >&2; exit 3; }

if [ -n "${A0ORG_A0_CACHE:-}" ]; then
  work="$A0ORG_A0_CACHE"; mkdir -p "$work"
else
  work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fi

status=0
for version in "${versions[@]}"; do
  archive="agent-zero-$version.tar.gz"
  sum_line="$(grep -E "[[:space:]]\*?$archive\$" "$archives/SHA256SUMS" || true)"
  if [ -z "$sum_line" ] || [ ! -f "$archives/$archive" ]; then
    echo "real Agent-Zero tests: $archive or its checksum is missing in $archives" >&2
    exit 3
  fi
  (cd "$archives" && echo "$sum_line" | sha256sum --check --quiet -) || { echo "real Agent-Zero tests: $archive does not match SHA256SUMS" >&2; exit 3; }

  # a tree and an environment are reused only for the same archive and the same recipe
  key="$(cat "$here/make_env.sh" "$here"/requirements-*.txt | sha256sum | cut -c1-12)-$(echo "$sum_line" | cut -c1-12)"
  slot="$work/$version-$key"
  if [ ! -f "$slot/ready" ]; then
    rm -rf "$slot"; mkdir -p "$slot"
    echo "== Agent-Zero $version: unpacking and building its Python 3.12 environment"
    tar -xzf "$archives/$archive" -C "$slot"
    tree="$(find "$slot" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
    if ! bash "$here/make_env.sh" "$tree" "$slot/venv" "$python312" > "$slot/build.log" 2>&1; then
      grep -v "^WARNING: Location" "$slot/build.log" | tail -n 30 >&2
      echo "real Agent-Zero tests: building the environment for $version failed (log: $slot/build.log)" >&2
      exit 1
    fi
    echo "$tree" > "$slot/ready"
  fi
  tree="$(cat "$slot/ready")"

  echo "== real Agent-Zero $version ($tree)"
  started=$SECONDS
  if A0ORG_TEST_A0_ROOT="$tree" A0ORG_TEST_A0_PYTHON="$slot/venv/bin/python" \
      "$runner" -m pytest -m real_a0 -p no:cacheprovider "${pytest_args[@]}" --rootdir "$repo" "$repo/tests"; then
    echo "== real Agent-Zero $version: passed in $((SECONDS - started)) s"
  else
    echo "== real Agent-Zero $version: FAILED after $((SECONDS - started)) s" >&2
    status=1
  fi
done
exit $status
