#!/usr/bin/env bash
# npm run test:setup: installs what the VS Code and Neovim tests need, once per machine, from
# Debian's apt and the npm registry only:
#   - apt: chromium (drives the VS Code workbench headlessly), neovim (the LSP test), and what
#     code-server's native modules build with (g++, make, python3, libkrb5-dev), ripgrep, a font,
#     cmake and ninja (the --from-build test configures and builds a small CMake project);
#   - npm, into $RIG_DIR (default /tmp/rig): code-server (the real VS Code workbench and its Node
#     extension host) and playwright-core (drives Debian's chromium; it downloads no browser).
# The project's own npm packages (@vscode/test-electron, mocha, ...) come from `npm ci`.
# A second run finds everything in place and returns in a second or two. Needs root for apt only
# when a package is missing. The rig's recipe and each workaround are explained in test/rig/README.md.
set -euo pipefail

RIG_DIR="${RIG_DIR:-/tmp/rig}"
# code-server 4.100.3 is VS Code 1.100.3, the engine version package.json asks for; its
# engines.node is 20 (4.103 and later ask for node 22).
CODE_SERVER_VERSION=4.100.3
PLAYWRIGHT_VERSION=1.65.1
APT_PACKAGES=(chromium neovim ripgrep g++ make python3 libkrb5-dev fonts-dejavu-core cmake ninja-build)
RECIPE="code-server $CODE_SERVER_VERSION, playwright-core $PLAYWRIGHT_VERSION, node $(node -p 'process.versions.node.split(".")[0]')"
STAMP="$RIG_DIR/.cuda-occupancy-rig"

started=$SECONDS
installed=()
say() { echo "test rig: $*"; }
installed_version() { node -p "require('$1/package.json').version" 2>/dev/null || true; }
missing_apt_packages() {
  local p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}
cs_package="$RIG_DIR/cs/node_modules/code-server"
pw_package="$RIG_DIR/pw/node_modules/playwright-core"
rig_in_place() {
  [[ -z "$(missing_apt_packages)" ]] \
    && [[ -x "$RIG_DIR/cs/node_modules/.bin/code-server" ]] \
    && [[ "$(installed_version "$cs_package")" == "$CODE_SERVER_VERSION" ]] \
    && [[ "$(installed_version "$pw_package")" == "$PLAYWRIGHT_VERSION" ]]
}

# The quick answer on a second run: the stamp says this recipe, and the pieces are still there.
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$RECIPE" ]] && rig_in_place; then
  say "ready in $RIG_DIR ($RECIPE): nothing to install"
  exit 0
fi

# --- Debian packages --------------------------------------------------------------------------
mapfile -t missing < <(missing_apt_packages)
if (( ${#missing[@]} > 0 )); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "test rig: these Debian packages are missing: ${missing[*]}" >&2
    echo "test rig: install them as root (apt-get install ${missing[*]}) or run npm run test:setup as root" >&2
    exit 1
  fi
  say "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  installed+=("${missing[@]}")
fi

export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
# node-gyp builds code-server's native modules against the headers of the node that runs it
# (Debian's and NodeSource's packages ship them), instead of downloading them.
node_prefix="$(node -p 'require("path").resolve(process.execPath, "..", "..")')"
[[ -f "$node_prefix/include/node/node.h" ]] && export npm_config_nodedir="$node_prefix"

# --- code-server --------------------------------------------------------------------------------
if [[ "$(installed_version "$cs_package")" != "$CODE_SERVER_VERSION" ]]; then
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  wanted="$(npm view "code-server@$CODE_SERVER_VERSION" engines.node)"
  if [[ "$wanted" != "$node_major" ]]; then
    echo "test rig: code-server $CODE_SERVER_VERSION runs on node $wanted; this is node $node_major" >&2
    exit 1
  fi
  say "npm install code-server@$CODE_SERVER_VERSION into $RIG_DIR/cs (builds native modules: about 1.5 to 2 minutes)"
  mkdir -p "$RIG_DIR/cs" "$RIG_DIR/tmp"
  [[ -f "$RIG_DIR/cs/package.json" ]] || echo '{ "name": "cuda-occupancy-rig-code-server", "private": true }' > "$RIG_DIR/cs/package.json"
  # VS Code's @vscode/ripgrep fetches rg from GitHub in its postinstall, unless its download
  # cache ($TMPDIR/vscode-ripgrep-cache-<package version>/ripgrep-<rg version>-<target>.tar.gz)
  # already holds it: we put Debian's rg there. code-server 4.100.3 pins @vscode/ripgrep 1.15.11,
  # which wants rg v13.0.0-10.
  case "$(uname -m)" in
    x86_64) rg_target=x86_64-unknown-linux-musl ;;
    aarch64) rg_target=aarch64-unknown-linux-musl ;;
    *) echo "test rig: no ripgrep target known for $(uname -m)" >&2; exit 1 ;;
  esac
  rg_cache="$RIG_DIR/tmp/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$rg_cache"
  rg_dir="$(mktemp -d)"
  cp "$(command -v rg)" "$rg_dir/rg"
  tar -czf "$rg_cache/ripgrep-v13.0.0-10-$rg_target.tar.gz" -C "$rg_dir" rg
  rm -rf "$rg_dir"
  # unsafe_perm: code-server's postinstall refuses to run as root without it.
  # yes: node-pty's postinstall runs `npx node-gyp`, which must not stop to ask.
  log="$RIG_DIR/code-server-install.log"
  if ! (cd "$RIG_DIR/cs" && TMPDIR="$RIG_DIR/tmp" npm_config_unsafe_perm=true npm_config_yes=true \
        npm install --no-save --foreground-scripts "code-server@$CODE_SERVER_VERSION" >"$log" 2>&1); then
    tail -n 40 "$log" >&2
    echo "test rig: npm install code-server failed; the whole log is $log" >&2
    exit 1
  fi
  installed+=("code-server")
fi

# --- playwright-core ----------------------------------------------------------------------------
if [[ "$(installed_version "$pw_package")" != "$PLAYWRIGHT_VERSION" ]]; then
  say "npm install playwright-core@$PLAYWRIGHT_VERSION into $RIG_DIR/pw (drives /usr/bin/chromium)"
  mkdir -p "$RIG_DIR/pw"
  [[ -f "$RIG_DIR/pw/package.json" ]] || echo '{ "name": "cuda-occupancy-rig-playwright", "private": true }' > "$RIG_DIR/pw/package.json"
  (cd "$RIG_DIR/pw" && npm install --no-save "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null)
  installed+=("playwright-core")
fi

if ! rig_in_place; then
  echo "test rig: the install ran but the rig is still incomplete in $RIG_DIR" >&2
  exit 1
fi
echo "$RECIPE" > "$STAMP"
if (( ${#installed[@]} > 0 )); then say "installed ${installed[*]} in $RIG_DIR in $((SECONDS - started)) s ($RECIPE)"
else say "found in place in $RIG_DIR ($RECIPE)"; fi
