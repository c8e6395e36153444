#!/bin/sh
# A throwaway PostgreSQL cluster for benchmarks, on a Unix socket only.
#   scripts/pgtmp.sh start [DIR]   make and start one; prints its URI
#   scripts/pgtmp.sh stop DIR      stop it and remove DIR
# The tests use tests/integration/fleet/pgcluster.py instead (the same
# settings). As root the cluster belongs to nobody: initdb refuses root.
# PG_BIN overrides /usr/lib/postgresql/15/bin.
set -eu
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u nobody -- "$@"
	else
		"$@"
	fi
}

start() {
	dir=${1:-$(mktemp -d /tmp/flakypg.XXXXXXXX)}
	mkdir -p "$dir"
	chmod 755 "$dir"
	[ "$(id -u)" -ne 0 ] || chown nobody:nogroup "$dir"
	as_owner "$PG_BIN/initdb" -D "$dir/data" -U flaky --auth=trust \
	    -E UTF8 --no-locale --no-sync --no-instructions >/dev/null
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = ${PG_SHARED_BUFFERS:-256MB}
max_wal_size = 4GB
CONF
	as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
	    start >/dev/null
	psql -X -q -d "postgresql:///postgres?host=$dir&user=flaky" \
	    -c 'CREATE DATABASE flaky' >/dev/null
	echo "postgresql:///flaky?host=$dir&user=flaky"
}

stop() {
	dir=$1
	case "$dir" in
	/*) ;;
	*) echo "pgtmp.sh: $dir: expected an absolute directory" >&2; exit 2 ;;
	esac
	[ -f "$dir/data/PG_VERSION" ] || {
		echo "pgtmp.sh: $dir: not a cluster made by pgtmp.sh start" >&2
		exit 2
	}
	as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop \
	    >/dev/null 2>&1 || true
	rm -rf "$dir"
}

case "${1:-}" in
start) shift; start "$@" ;;
stop) [ $# -eq 2 ] || { echo "usage: pgtmp.sh stop DIR" >&2; exit 2; }
      stop "$2" ;;
*) echo "usage: pgtmp.sh start [DIR] | stop DIR" >&2; exit 2 ;;
esac
