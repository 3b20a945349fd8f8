#!/bin/bash
# A throwaway PostgreSQL 15 cluster for tests and benchmarks (after
# /work/shared/recipes/postgresql-throwaway.sh): unix socket only (listen_addresses=''), trust
# authentication, fsync off, everything under DIR.
#
#   scripts/services/postgres.sh start DIR   # fresh cluster in DIR/data, socket in DIR/sock;
#                                            # prints the connection URL on stdout
#   scripts/services/postgres.sh url DIR     # prints the URL again
#   scripts/services/postgres.sh stop DIR    # stops it (no error when nothing runs)
#
# `start` detaches completely (pg_ctl -l DIR/pg.log), so a ctest setup test that calls it returns.
# A cluster left running in DIR by an earlier, aborted run is stopped and replaced. As root the
# server runs as the postgres user (initdb refuses root), so DIR must be enterable by it.
# PORT (default 55432) only names the socket file: each DIR has its own socket, so clusters in
# different DIRs (other build trees) do not clash.
set -euo pipefail

usage() { echo "usage: $0 start|stop|url DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
ACTION=$1
DIR=$(realpath -m "$2")
PORT=${PORT:-55432}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
URL="postgresql:///postgres?host=$DIR/sock&port=$PORT&user=postgres"

if [[ ! -x $PGBIN/pg_ctl ]]; then
  echo "postgres.sh: $PGBIN/pg_ctl not found: install postgresql-15 (scripts/setup.sh)" >&2
  exit 3
fi
# Unix socket paths are limited to 107 bytes (sun_path).
if (( ${#DIR} + 20 > 107 )); then
  echo "postgres.sh: $DIR is too long for a unix socket path (at most ~87 characters)" >&2
  exit 2
fi

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop() {
  if [[ -f $DIR/data/postmaster.pid ]]; then
    as_owner "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}

start() {
  stop
  rm -rf "$DIR"
  mkdir -p "$DIR/sock"
  if [[ $(id -u) -eq 0 ]]; then chown -R postgres:postgres "$DIR"; fi
  if ! as_owner "$PGBIN/initdb" -D "$DIR/data" -U postgres -A trust --no-sync -E UTF8 \
      --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1; then
    echo "postgres.sh: initdb failed, see $DIR/initdb.log:" >&2
    tail -5 "$DIR/initdb.log" >&2
    exit 3
  fi
  # synchronous_commit and full_page_writes off too: a test cluster never outlives a crash.
  if ! as_owner "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/pg.log" -w -t 60 \
      -o "-k $DIR/sock -p $PORT -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
      start >/dev/null </dev/null; then
    echo "postgres.sh: the server did not start, see $DIR/pg.log:" >&2
    tail -5 "$DIR/pg.log" >&2
    exit 3
  fi
  echo "$URL"
}

case $ACTION in
  start) start ;;
  stop) stop ;;
  url) echo "$URL" ;;
  *) usage ;;
esac
