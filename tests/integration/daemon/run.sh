#!/bin/sh
# The daemon integration tests: run.sh FLAKYD FLAKYCTL [pytest args and
# paths...] (no paths: every test here)
# A shell in front so that `meson test --setup=valgrind` wraps only this
# shell: pytest runs natively and puts valgrind around flakyctl itself
# (FLAKY_VALGRIND=1).
set -e
FLAKYD=$1
FLAKYCTL=$2
shift 2
export FLAKYD FLAKYCTL
here=$(dirname "$0")
[ $# -gt 0 ] || set -- "$here"
exec /usr/bin/pytest -q -p no:random_order -p no:cacheprovider -x "$@"
