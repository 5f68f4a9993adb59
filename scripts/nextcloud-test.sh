#!/usr/bin/env bash
# nextcloud-test.sh — a throwaway, real Nextcloud on loopback for the Nextcloud
# contract and end-to-end tests.
#
#   eval "$(scripts/nextcloud-test.sh start)"   # install if needed, start, print exports
#   scripts/nextcloud-test.sh stop
#   scripts/nextcloud-test.sh status
#   scripts/nextcloud-test.sh run CMD…          # CMD with a server: started (and stopped after) when
#                                               # SWITCHBOARD_NEXTCLOUD_TARBALL is set and
#                                               # SWITCHBOARD_NEXTCLOUD_URL is not; else CMD as is
#
# It installs the release tarball named by SWITCHBOARD_NEXTCLOUD_TARBALL (a
# .tar.gz of the release whose top folder is nextcloud/, or the common prefix
# of its split parts NAME.part-0, NAME.part-1, …) into SWITCHBOARD_NEXTCLOUD_DIR
# (default ${TMPDIR:-/tmp}/switchboard-nextcloud) with SQLite and an admin
# account, and serves it with Apache + mod_php on SWITCHBOARD_NEXTCLOUD_LISTEN
# (default 127.0.0.1:8790). Nothing else is created: the tests make a fresh
# account per test through the provisioning API, so that per-user limits
# (20 share creations per 10 minutes) never leak from one test into another.
#
# stdout carries only export lines (SWITCHBOARD_NEXTCLOUD_URL,
# SWITCHBOARD_NEXTCLOUD_ADMIN_USER, SWITCHBOARD_NEXTCLOUD_ADMIN_PASSWORD,
# SWITCHBOARD_NEXTCLOUD_SHARE_WINDOW), the same variables a user sets to run
# the suite against their own server. The share limit's window is shortened
# to SWITCHBOARD_NEXTCLOUD_SHARE_WINDOW seconds (default 30; Nextcloud's own
# is 600) so that a delivery waiting out the limit finishes in a test.
# Progress goes to stderr. With SWITCHBOARD_NEXTCLOUD_APT=1 missing Debian
# packages (PHP 8.2, Apache, mod_php) are installed with apt-get.
set -euo pipefail

ACTION=${1:-start}
DIR=${SWITCHBOARD_NEXTCLOUD_DIR:-${TMPDIR:-/tmp}/switchboard-nextcloud}
LISTEN=${SWITCHBOARD_NEXTCLOUD_LISTEN:-127.0.0.1:8790}
TARBALL=${SWITCHBOARD_NEXTCLOUD_TARBALL:-}
APACHE=/usr/sbin/apache2
MODS=/usr/lib/apache2/modules
PACKAGES=(php8.2-cli php8.2-sqlite3 php8.2-xml php8.2-mbstring php8.2-gd php8.2-curl php8.2-zip
  php8.2-intl php8.2-bcmath php8.2-gmp apache2-bin libapache2-mod-php8.2 openssl)

say() { printf 'nextcloud-test: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

case $LISTEN in
  *:*) HOST=${LISTEN%:*}; PORT=${LISTEN##*:} ;;
  *) die "SWITCHBOARD_NEXTCLOUD_LISTEN=$LISTEN: give host:port, e.g. 127.0.0.1:8790" ;;
esac
[[ $PORT =~ ^[0-9]+$ ]] || die "SWITCHBOARD_NEXTCLOUD_LISTEN=$LISTEN: the port is not a number"
[ "$HOST" = 127.0.0.1 ] || [ "$HOST" = localhost ] || die "SWITCHBOARD_NEXTCLOUD_LISTEN=$LISTEN: the test server listens on loopback only (127.0.0.1)"
URL=http://$HOST:$PORT

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd -P)
NC=$DIR/nextcloud
DATA=$DIR/data
CONF=$DIR/httpd.conf
PIDFILE=$DIR/httpd.pid
CRED=$DIR/admin.env
RUNAS=()
if [ "$(id -u)" = 0 ]; then RUNAS=(runuser -u www-data --); fi

pid() { # the Apache parent started from our httpd.conf, if it runs
  local p
  [ -s "$PIDFILE" ] || return 1
  p=$(cat "$PIDFILE")
  [ -r "/proc/$p/cmdline" ] && tr '\0' '\n' <"/proc/$p/cmdline" | grep -qxF -- "$CONF" && echo "$p"
}

stop() {
  local p i
  p=$(pid) || return 0
  say "stopping Apache (pid $p)"
  kill -TERM "$p" 2>/dev/null || true
  for i in $(seq 1 100); do [ -e "/proc/$p" ] || return 0; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null || true
}

exports() {
  cat "$CRED"
  printf 'export SWITCHBOARD_NEXTCLOUD_URL=%q\n' "$URL"
  printf 'export SWITCHBOARD_NEXTCLOUD_SHARE_WINDOW=%q\n' "${SWITCHBOARD_NEXTCLOUD_SHARE_WINDOW:-30}"
}

up() { # status.php says installed and not in maintenance
  curl -fsS --max-time 5 "$URL/status.php" 2>/dev/null | grep -q '"installed":true,"maintenance":false'
}

case $ACTION in
  run)
    shift
    if [ -n "$TARBALL" ] && [ -z "${SWITCHBOARD_NEXTCLOUD_URL:-}" ]; then
      env_lines=$("$0" start) || exit 1
      eval "$env_lines"
      trap '"$0" stop' EXIT
    fi
    "$@"
    exit $? ;;
  stop) stop; exit 0 ;;
  status) if p=$(pid) && up; then say "running: pid $p at $URL"; exit 0; fi; say "not running"; exit 3 ;;
  start) ;;
  *) die "unknown action $ACTION: use start, stop or status" ;;
esac

if [ -f "$DIR/.installed" ] && pid >/dev/null && up; then exports; exit 0; fi
stop

t0=$SECONDS
missing=()
for p in "${PACKAGES[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  [ "${SWITCHBOARD_NEXTCLOUD_APT:-}" = 1 ] || die "missing Debian packages: ${missing[*]} (install them, or set SWITCHBOARD_NEXTCLOUD_APT=1 to let this script run apt-get)"
  say "apt-get install ${missing[*]}"
  sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo -n)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

occ() { "${RUNAS[@]}" php "$NC/occ" --no-interaction "$@"; }

if [ ! -f "$DIR/.installed" ]; then
  [ -n "$TARBALL" ] || die "SWITCHBOARD_NEXTCLOUD_TARBALL is not set: name a Nextcloud release tarball (or the prefix of its .part-* files)"
  rm -rf "$NC" "$DATA" "$CRED"
  if [ -f "$TARBALL" ]; then
    say "extracting $TARBALL"
    tar -xzf "$TARBALL" -C "$DIR" --no-same-owner
  elif compgen -G "$TARBALL.part-*" >/dev/null; then
    say "extracting $TARBALL.part-*"
    # shellcheck disable=SC2046
    cat $(ls "$TARBALL".part-* | sort -V) | tar -xz -C "$DIR" --no-same-owner
  else
    die "SWITCHBOARD_NEXTCLOUD_TARBALL=$TARBALL: neither that file nor $TARBALL.part-* exists"
  fi
  [ -f "$NC/version.php" ] || die "$TARBALL has no nextcloud/version.php; is it a Nextcloud release?"
  [ ! -e "$NC/config/config.php" ] || die "$TARBALL carries a config.php; use an unconfigured release"
  mkdir -p "$DATA"
  chmod 0770 "$DATA"
  if [ ${#RUNAS[@]} -gt 0 ]; then
    chown -R www-data:www-data "$NC" "$DATA"
    runuser -u www-data -- test -w "$DATA" || die "www-data cannot write $DATA: a parent of $DIR is not reachable for it; set SWITCHBOARD_NEXTCLOUD_DIR under /tmp"
  fi
  # Nextcloud's password policy wants 13+ characters here (its lists for
  # shorter passwords may be absent from a trimmed release).
  admin_pass=$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')
  say "occ maintenance:install (SQLite)"
  occ maintenance:install --database sqlite --admin-user admin --admin-pass "$admin_pass" --data-dir "$DATA" >"$DIR/setup.log" 2>&1 \
    || { tail -n 20 "$DIR/setup.log" >&2; die "occ maintenance:install failed (log: $DIR/setup.log)"; }
  {
    occ config:system:set trusted_domains 0 --value 127.0.0.1
    occ config:system:set trusted_domains 1 --value localhost
    occ config:system:set overwrite.cli.url --value "$URL"
    occ config:system:set htaccess.RewriteBase --value /
    occ config:system:set has_internet_connection --type boolean --value false
    occ config:system:set skeletondirectory --value ''
    occ maintenance:update:htaccess
  } >>"$DIR/setup.log" 2>&1 || { tail -n 20 "$DIR/setup.log" >&2; die "occ config failed (log: $DIR/setup.log)"; }
  (umask 077; {
    printf 'export SWITCHBOARD_NEXTCLOUD_ADMIN_USER=admin\n'
    printf 'export SWITCHBOARD_NEXTCLOUD_ADMIN_PASSWORD=%q\n' "$admin_pass"
  } >"$CRED")
  touch "$DIR/.installed"
  say "installed in $((SECONDS - t0)) s"
fi
if [ "$(occ config:system:get overwrite.cli.url)" != "$URL" ]; then
  occ config:system:set overwrite.cli.url --value "$URL" >>"$DIR/setup.log"
fi
# Nextcloud allows 20 share creations per user in 600 s. The limit stays 20;
# the window is shortened (Nextcloud's own ratelimit_overwrite setting) so
# that a test can wait it out: SWITCHBOARD_NEXTCLOUD_SHARE_WINDOW seconds,
# default 30. The tests read the window from the same variable.
WINDOW=${SWITCHBOARD_NEXTCLOUD_SHARE_WINDOW:-30}
[[ $WINDOW =~ ^[1-9][0-9]*$ ]] || die "SWITCHBOARD_NEXTCLOUD_SHARE_WINDOW=$WINDOW: give seconds, e.g. 30 (Nextcloud's default is 600)"
if [ "$(occ config:system:get ratelimit_overwrite files_sharing.shareapi.createshare user period 2>/dev/null)" != "$WINDOW" ]; then
  occ config:system:set ratelimit_overwrite files_sharing.shareapi.createshare user limit --type integer --value 20 >>"$DIR/setup.log"
  occ config:system:set ratelimit_overwrite files_sharing.shareapi.createshare user period --type integer --value "$WINDOW" >>"$DIR/setup.log"
fi

user=; [ ${#RUNAS[@]} -gt 0 ] && user="User www-data
Group www-data"
cat >"$CONF" <<EOF
ServerRoot "$DIR"
ServerName $HOST
Listen $HOST:$PORT
PidFile $PIDFILE
DefaultRuntimeDir $DIR
Mutex file:$DIR default
$user
ErrorLog $DIR/error.log
LogLevel warn
LogFormat "%h %t \"%r\" %>s %b %D" nc
LoadModule mpm_prefork_module $MODS/mod_mpm_prefork.so
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule mime_module $MODS/mod_mime.so
LoadModule dir_module $MODS/mod_dir.so
LoadModule rewrite_module $MODS/mod_rewrite.so
LoadModule headers_module $MODS/mod_headers.so
LoadModule env_module $MODS/mod_env.so
LoadModule setenvif_module $MODS/mod_setenvif.so
LoadModule php_module $MODS/libphp8.2.so
CustomLog $DIR/access.log nc
StartServers 4
MinSpareServers 2
MaxSpareServers 8
MaxRequestWorkers 16
KeepAlive On
TypesConfig /etc/mime.types
<FilesMatch "\.php\$">
  SetHandler application/x-httpd-php
</FilesMatch>
DirectoryIndex index.php index.html
DocumentRoot $NC
<Directory />
  AllowOverride None
  Require all denied
</Directory>
<Directory $NC>
  Require all granted
  AllowOverride All
  Options FollowSymLinks MultiViews
</Directory>
php_admin_value memory_limit 512M
php_admin_value upload_max_filesize 1G
php_admin_value post_max_size 1G
php_admin_value output_buffering 0
EOF
[ -f /etc/mime.types ] || sed -i '/^TypesConfig/d' "$CONF"

say "starting Apache on $HOST:$PORT"
"$APACHE" -f "$CONF" -k start || die "Apache did not start (port $PORT in use? see $DIR/error.log)"
for _ in $(seq 1 200); do up && break; sleep 0.1; done
up || { tail -n 20 "$DIR/error.log" >&2; die "Nextcloud did not come up at $URL (logs: $DIR/error.log, $DATA/nextcloud.log)"; }
say "up at $URL in $((SECONDS - t0)) s"
exports
