#!/usr/bin/env bash
# Prints the path of promtool (Prometheus' rule checker). When it is missing, installs Debian's
# `prometheus` package, which ships it — as root (or through passwordless sudo), without starting
# the Prometheus service. Nothing else is downloaded or cached.
set -euo pipefail
if bin=$(command -v promtool); then echo "$bin"; exit 0; fi
if ! command -v apt-get >/dev/null; then
	echo "ensure-promtool: promtool not found and no apt-get to install it; install Prometheus' promtool and put it on PATH" >&2
	exit 1
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		as_root=(sudo -n)
	else
		echo "ensure-promtool: promtool not found; installing Debian's prometheus package needs root (apt-get install prometheus)" >&2
		exit 1
	fi
fi
# policy-rc.d answering 101 forbids maintainer scripts to start services; add one for the
# install only if the system has none.
policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
	"${as_root[@]}" sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
	own_policy=1
fi
cleanup() { if [ -n "$own_policy" ]; then "${as_root[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT
echo "ensure-promtool: installing Debian's prometheus package for promtool" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >&2
bin=$(command -v promtool) || { echo "ensure-promtool: the prometheus package did not provide promtool" >&2; exit 1; }
echo "$bin"
