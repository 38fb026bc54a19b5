#!/usr/bin/env bash
# Install only the supervisor-loop hooks (radio check, and a unit's steering inbox) into Agent-Zero
# (install_all.sh installs everything).
#   ./install_supervisor_loop.sh [--a0-root /a0] [--python PATH] [--check-only | --dry-run | --uninstall]
#                                [--form plugin|extensions]
# Same options and Python look-up as install_all.sh, which does the work.
# Run `./install_supervisor_loop.sh --help` for every option; docs/install.md explains them.
set -euo pipefail
A0ORG_INSTALL_COMPONENT=supervisor-loop exec bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/install_all.sh" "$@"
