#!/usr/bin/env bash
# Start a throwaway PostgreSQL server on the loopback address for the tests and the
# benchmarks; install it first (Debian's package, with apt-get, saying so) when the
# machine has none.
#   eval "$(scripts/postgres.sh start)"   # exports HUGGINGGPT_TEST_POSTGRES_URL, and
#                                          # HUGGINGGPT_TEST_POSTGRES_STARTED=1 when it
#                                          # started the server (not when one was running)
#   scripts/postgres.sh stop
set -euo pipefail
DATA=${PGTEST_DIR:-/tmp/hugginggpt-pg}
PORT=${PGTEST_PORT:-55432}

find_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && echo "$dir"
}

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-start}" in
  start)
    BIN=$(find_bin || true)
    if [ -z "$BIN" ]; then
      echo "postgres.sh: installing PostgreSQL (Debian package postgresql) for the" \
           "database tests" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
      BIN=$(find_bin)
    fi
    if ! as_postgres "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
      echo "postgres.sh: starting a throwaway PostgreSQL on 127.0.0.1:$PORT ($DATA)" >&2
      rm -rf "$DATA" && mkdir -p "$DATA"
      [ "$(id -u)" = 0 ] && chown postgres "$DATA"
      as_postgres "$BIN/initdb" -D "$DATA" -U postgres -A trust >/dev/null
      as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DATA -c max_connections=200" start >/dev/null
      echo "export HUGGINGGPT_TEST_POSTGRES_STARTED=1"
    fi
    echo "export HUGGINGGPT_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$PORT/postgres"
    ;;
  stop)
    BIN=$(find_bin)
    as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null || true
    rm -rf "$DATA"
    ;;
esac
