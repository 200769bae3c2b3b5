# Helpers shared by scripts/test and scripts/start-postgres (sourced, not run).
# shellcheck shell=bash

# scripts/start-postgres alone: this port and folder unless LUDOTECA_PG_PORT/LUDOTECA_PG_DIR say
# otherwise (scripts/test picks a free port and a private folder for each run).
PG_PORT="${LUDOTECA_PG_PORT:-55432}"
PG_DIR="${LUDOTECA_PG_DIR:-/tmp/ludoteca-pg}"
APT_LOCK_WAIT="${LUDOTECA_APT_LOCK_WAIT:-600}"   # seconds to wait for another install to finish

# True when running under CI (CI=true, as GitHub Actions, GitLab and most CI systems set it).
is_ci() {
  case "${CI:-}" in
    [Tt][Rr][Uu][Ee] | 1 | [Yy][Ee][Ss]) return 0 ;;
    *) return 1 ;;
  esac
}

# A dependency of some tests is missing: under CI an error (exit 1), elsewhere a warning
# (those tests are skipped).
missing() {
  if is_ci; then
    echo "error: $1; CI=true, so its tests may not be skipped" >&2
    exit 1
  fi
  echo "warning: $1; its tests will be skipped" >&2
}

# apt-get install PACKAGES, waiting for the package lock if another install holds it.
# `DPkg::Lock::Timeout` makes apt-get wait for the dpkg lock; `apt-get update` also takes the
# package lists' lock, which that option does not cover on every apt version, so it is retried.
apt_install() {
  local waited=0
  until apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT" update -qq; do
    if [ "$waited" -ge "$APT_LOCK_WAIT" ]; then
      echo "apt-get update still failing after ${waited} s" >&2
      return 1
    fi
    echo "apt-get update failed (another install holding the lock?); retrying in 10 s" >&2
    sleep 10
    waited=$((waited + 10))
  done
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT" install -y -qq "$@" >/dev/null
}

# The newest installed PostgreSQL's bin directory (empty if PostgreSQL is not installed).
pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

# Run a PostgreSQL program as the postgres user when we are root (it refuses to run as root).
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# True when the throwaway server in $PG_DIR is running.
pg_running() {
  local bin
  bin=$(pg_bin)
  [ -n "$bin" ] && as_pg "$bin/pg_ctl" -D "$PG_DIR" status >/dev/null 2>&1
}

# Stop the throwaway server in $PG_DIR (fast shutdown: open sessions are closed).
pg_stop() {
  local bin
  bin=$(pg_bin)
  [ -n "$bin" ] && as_pg "$bin/pg_ctl" -D "$PG_DIR" -m fast -w stop >/dev/null
}

# A free TCP port on 127.0.0.1 (the kernel's pick; the server started next binds it).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# scripts/test: PostgreSQL on a free port with a private folder (mktemp) for this run, unless
# LUDOTECA_PG_PORT/LUDOTECA_PG_DIR say which; sets and exports them (and PG_PORT, PG_DIR). A folder
# made here is added to PRIVATE_DIRS (the caller removes them when it ends).
private_postgres() {
  if [ -z "${LUDOTECA_PG_DIR:-}" ]; then
    PG_DIR=$(mktemp -d /tmp/ludoteca-pg.XXXXXX)
    PRIVATE_DIRS+=("$PG_DIR")
  fi
  [ -n "${LUDOTECA_PG_PORT:-}" ] || PG_PORT=$(free_port)
  export LUDOTECA_PG_DIR="$PG_DIR" LUDOTECA_PG_PORT="$PG_PORT"
}

# scripts/test: the same for Redis (LUDOTECA_REDIS_PORT, LUDOTECA_REDIS_DIR).
private_redis() {
  if [ -z "${LUDOTECA_REDIS_DIR:-}" ]; then
    LUDOTECA_REDIS_DIR=$(mktemp -d /tmp/ludoteca-redis.XXXXXX)
    PRIVATE_DIRS+=("$LUDOTECA_REDIS_DIR")
  fi
  [ -n "${LUDOTECA_REDIS_PORT:-}" ] || LUDOTECA_REDIS_PORT=$(free_port)
  export LUDOTECA_REDIS_DIR LUDOTECA_REDIS_PORT
}
