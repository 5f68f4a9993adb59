#!/usr/bin/env bash
# Runs govulncheck (pinned in go.mod as a tool) over the root module.
#
# Without network access to vuln.go.dev it reads an offline copy of the Go
# vulnerability database: the OSV files of the golang.org/x/vulndb module at
# VULNDB_VERSION (fetched through the Go module proxy like any module), turned
# into the database layout govulncheck reads by the vulndb project's own
# indexdb command, once per version, into the user cache directory. Bump
# VULNDB_VERSION to see newer advisories; set SWITCHBOARD_VULNDB to a database
# URL (for example https://vuln.go.dev) to use that instead.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018 # 2026-11-05

db=${SWITCHBOARD_VULNDB:-}
if [ -z "$db" ]; then
  dir=${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/vulndb-$VULNDB_VERSION
  if [ ! -f "$dir/index/db.json" ]; then
    src=$($GO mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    [ -d "$src/data/osv" ] || { echo "vulncheck: no data/osv in golang.org/x/vulndb@$VULNDB_VERSION" >&2; exit 1; }
    rm -rf "$dir.tmp" && mkdir -p "$(dirname "$dir")"
    $GO run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" -vulns "$src/data/osv" -out "$dir.tmp"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  db=file://$dir
fi
exec $GO tool govulncheck -db "$db" ./...
