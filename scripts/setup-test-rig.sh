#!/usr/bin/env bash
# Installs what the VS Code and Neovim tests need, once per machine: the rig in
# ../shared/vscode-rig (code-server 4.100.3, Debian's Chromium and Neovim,
# playwright-core), from the npm registry and apt only. Skips what is there.
set -euo pipefail
RIG_DIR="${RIG_DIR:-/tmp/rig}"
here="$(cd "$(dirname "$0")/.." && pwd)"
setup="$here/../shared/vscode-rig/setup.sh"
if [[ -x "$RIG_DIR/cs/node_modules/.bin/code-server" && -d "$RIG_DIR/pw/node_modules/playwright-core" ]] \
   && command -v chromium >/dev/null && command -v nvim >/dev/null; then
  echo "test rig already installed in $RIG_DIR"
  exit 0
fi
if [[ ! -f "$setup" ]]; then
  echo "cannot install the test rig: $setup is missing (the repository expects ../shared beside it)" >&2
  exit 1
fi
bash "$setup" "$RIG_DIR"
