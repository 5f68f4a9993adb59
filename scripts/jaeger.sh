#!/usr/bin/env bash
# Prints the path of a Jaeger binary (v1.75.0, the v2 backend: an
# OpenTelemetry Collector distribution), building it once from the tool
# module tools/jaeger into $SWITCHBOARD_CACHE (default ~/.cache/switchboard).
# The build takes about 5 minutes on 2 cores with a cold Go build cache and
# yields a ~120 MB binary; later calls only print the path.
# SWITCHBOARD_JAEGER, when set, names a binary to use instead.
#   usage: scripts/jaeger.sh            (prints the binary's path, building it when missing)
#          scripts/jaeger.sh --cached   (prints it only when already built; exit 3 otherwise)
set -euo pipefail
if [ -n "${SWITCHBOARD_JAEGER:-}" ]; then echo "$SWITCHBOARD_JAEGER"; exit; fi
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(awk '$1=="github.com/jaegertracing/jaeger"{print $2}' "$root/tools/jaeger/go.mod")
cache=${SWITCHBOARD_CACHE:-$HOME/.cache/switchboard}
bin="$cache/jaeger-$version"
if [ ! -x "$bin" ] && [ "${1:-}" = --cached ]; then
  echo "jaeger: not built yet; run scripts/jaeger.sh (once, about 5 minutes)" >&2
  exit 3
fi
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  echo "jaeger: building $version into $bin (once; about 5 minutes)" >&2
  (cd "$root/tools/jaeger" && GOTOOLCHAIN=auto go build -trimpath -o "$bin.tmp" github.com/jaegertracing/jaeger/cmd/jaeger)
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
