#!/usr/bin/env bash
# Install the organization kernel and the supervisor loop into Agent-Zero.
#   ./install_all.sh [--a0-root /a0] [--python PATH] [--check-only | --dry-run | --uninstall]
#                    [--form plugin|extensions] [--no-library] [--activate ORG_ID | --deactivate]
#                    [--with-supervisors]
# From Agent-Zero v0.9.9 the pack is installed as the plugin usr/plugins/a0_org_kernel/ (switched on
# and off in Agent-Zero's plugin list) unless --form extensions or an extension-folder install says otherwise.
# Phase 3, the LLM-backed supervisors, is off by default: it is installed with
# --with-supervisors, or once usr/organizations/supervisors.yaml configures a model.
# A0ORG_INSTALL_COMPONENT=supervisors installs (or --uninstall removes) only that phase.
# All the work is done by `python -m org.install` (standard library only); this
# script only finds the pack (its own folder) and Agent-Zero's Python.
# Run `./install_all.sh --help` for every option; docs/install.md explains them.
set -euo pipefail

# install_supervisor_loop.sh runs this script for its one component
component="${A0ORG_INSTALL_COMPONENT:-all}"
pack_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

python=""
args=()
help=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        -h|--help)
            help=1; args+=("$1"); shift ;;
        --python)
            [[ $# -ge 2 ]] || { echo "error: --python needs a path" >&2; exit 2; }
            python="$2"; shift 2 ;;
        --python=*)
            python="${1#--python=}"; shift ;;
        *)
            args+=("$1"); shift ;;
    esac
done

if [[ -n "$python" ]]; then
    if [[ ! -x "$python" ]] && ! command -v "$python" >/dev/null 2>&1; then
        echo "error: --python $python: no such executable" >&2
        exit 2
    fi
elif [[ -x /opt/venv-a0/bin/python ]]; then
    python=/opt/venv-a0/bin/python      # Agent-Zero's own venv since v0.9.6
elif [[ -x /opt/venv/bin/python ]]; then
    python=/opt/venv/bin/python         # Agent-Zero v0.9.5 and older
elif [[ -n "$help" ]] && command -v python3 >/dev/null 2>&1; then
    python=python3                      # the help needs no Agent-Zero: any Python prints it
else
    echo "error: Agent-Zero's Python was not found at /opt/venv-a0/bin/python or /opt/venv/bin/python;" \
         "run this inside the Agent-Zero container or pass --python PATH" >&2
    exit 2
fi

# PYTHONSAFEPATH: `-m` would otherwise put the current folder first on sys.path, and an
# `org` folder there (a checkout of this pack, say) would run instead of this pack's installer.
PYTHONPATH="$pack_dir" PYTHONSAFEPATH=1 exec "$python" -m org.install "$component" ${args[@]+"${args[@]}"}
