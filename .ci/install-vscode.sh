#!/usr/bin/env bash
# Installs what the VS Code extension's end-to-end test needs, idempotently:
# Debian's Chromium (driven by playwright-core) and code-server 4.100.3 (a real VS Code 1.100.3
# workbench and extension host; the newest code-server that runs on Node 20). code-server's npm
# install builds native modules from source and, left alone, downloads from hosts this machine
# cannot reach: the workarounds below are ripgrep from Debian put in @vscode/ripgrep's download
# cache, `npm_config_yes` (no prompt from npx), `npm_config_unsafe_perm` (scripts run as root
# keep working) and two build jobs. The install is cached outside the clone (~300 MB,
# ~90 s to build) in $TANDEM_CODE_SERVER_DIR (default ~/.cache/tandem/code-server-4.100.3).
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
CS_DIR=${TANDEM_CODE_SERVER_DIR:-$HOME/.cache/tandem/code-server-$CODE_SERVER_VERSION}

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium fonts-liberation)
command -v rg >/dev/null || need_apt+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -q -o DPkg::Lock::Timeout=300
  apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends "${need_apt[@]}"
fi
chromium --version

if "$CS_DIR/node_modules/.bin/code-server" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION "; then
  echo "code-server $CODE_SERVER_VERSION already in $CS_DIR"
else
  mkdir -p "$CS_DIR"
  tmp=${TMPDIR:-/tmp}
  # @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache holds the archive.
  cache=$tmp/vscode-ripgrep-cache-1.15.11
  mkdir -p "$cache" "$tmp/rgstage"
  cp "$(command -v rg)" "$tmp/rgstage/rg"
  tar czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$tmp/rgstage" rg
  echo '{"private":true}' > "$CS_DIR/package.json"
  (cd "$CS_DIR" && npm_config_yes=true npm_config_jobs=2 npm_config_unsafe_perm=true \
    npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" --foreground-scripts >"$CS_DIR/install.log" 2>&1) \
    || { tail -40 "$CS_DIR/install.log" >&2; exit 1; }
fi
"$CS_DIR/node_modules/.bin/code-server" --version
