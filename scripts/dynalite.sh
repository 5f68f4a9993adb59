#!/usr/bin/env bash
# Runs a command with dynalite (the DynamoDB-API server pinned in
# package-lock.json) listening on 127.0.0.1:$DYNALITE_PORT. If something
# already answers there it is reused; otherwise dynalite is started, with data
# under $DYNALITE_PATH when set (survives restarts), and stopped afterwards.
# When the user points DynamoDB elsewhere (AWS_ENDPOINT_URL_DYNAMODB, or
# AWS_ENDPOINT_URL for every service, e.g. LocalStack), that wins: dynalite is
# not started and the command runs as it is.
#   usage: scripts/dynalite.sh <command> [args…]
set -euo pipefail
# On a terminal, job control gives the command its own process group and
# makes it the terminal's foreground: Ctrl-C then reaches only the command
# (which shuts down and exits 0), not make above us, which would otherwise
# die of the interrupt and end `make dev` with status 130. Dynalite, in its
# own background group, is stopped by the trap below.
if [ -t 0 ]; then set -m; fi
if [ -n "${AWS_ENDPOINT_URL_DYNAMODB:-}${AWS_ENDPOINT_URL:-}" ]; then
  echo "dynalite: not started; DynamoDB is ${AWS_ENDPOINT_URL_DYNAMODB:-$AWS_ENDPOINT_URL} (AWS_ENDPOINT_URL${AWS_ENDPOINT_URL_DYNAMODB:+_DYNAMODB})" >&2
  "$@"
  exit
fi
port=${DYNALITE_PORT:-8701}
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$root/node_modules/dynalite/cli.js" ] || { echo "dynalite is not installed; run: npm ci" >&2; exit 1; }
bin="$root/scripts/dynalite.cjs" # dynalite's own CLI, kept up when a client aborts a request

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

pid=""
if listening; then
  echo "dynalite: reusing the server on 127.0.0.1:$port" >&2
else
  args=(--host 127.0.0.1 --port "$port" --createTableMs 0 --deleteTableMs 0 --updateTableMs 0)
  if [ -n "${DYNALITE_PATH:-}" ]; then mkdir -p "$DYNALITE_PATH"; args+=(--path "$DYNALITE_PATH"); fi
  node "$bin" "${args[@]}" >/dev/null &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do listening && break; sleep 0.1; done
  listening || { echo "dynalite did not start on 127.0.0.1:$port" >&2; exit 1; }
fi
export AWS_ENDPOINT_URL_DYNAMODB=${AWS_ENDPOINT_URL_DYNAMODB:-http://127.0.0.1:$port}
export SWITCHBOARD_DYNAMODB_SERVER="dynalite $(node -p "require('$root/node_modules/dynalite/package.json').version")"
# Run in the foreground (not exec) so that the trap stops dynalite when the
# command ends, also after Ctrl-C.
"$@"
