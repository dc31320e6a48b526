#!/usr/bin/env bash
# Installs ccusage 20.0.24 (the token-count oracle) into a cache dir once; prints its bin path.
# Newer versions' native binaries are missing on the npm mirror here.
set -euo pipefail
version=20.0.24
cache="${AGENTOTEL_CACHE:-$HOME/.cache/agentotel}/ccusage-$version"
bin="$cache/node_modules/.bin/ccusage"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
command -v npm >/dev/null || { echo "ensure-ccusage: npm not found" >&2; exit 1; }
mkdir -p "$cache"
npm install --silent --no-audit --no-fund --prefix "$cache" "ccusage@$version" >&2
echo "$bin"
