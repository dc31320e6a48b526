#!/usr/bin/env bash
# Builds Jaeger v2 (v1.76.0) from its module source once and caches the binary.
# Prints the binary's path. `go install` cannot be used: the module has a replace directive.
set -euo pipefail
version=v1.76.0
cache="${AGENTOTEL_CACHE:-$HOME/.cache/agentotel}"
bin="$cache/jaeger-$version/jaeger"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$cache"
# Download outside any module, so this checkout's go.mod/go.sum are never touched.
dir=$(cd "$(mktemp -d)" && go mod download -json "github.com/jaegertracing/jaeger@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "ensure-jaeger: could not download jaeger $version" >&2; exit 1; }
src="$cache/jaeger-src-$version"
rm -rf "$src"; cp -r "$dir" "$src"; chmod -R u+w "$src"
echo "ensure-jaeger: building jaeger $version (a few minutes the first time)" >&2
(cd "$src" && CGO_ENABLED=0 go build -o "$bin.tmp" ./cmd/jaeger)
mv "$bin.tmp" "$bin"
rm -rf "$src"
echo "$bin"
