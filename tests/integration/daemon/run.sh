#!/bin/sh
# The daemon integration tests: run.sh FLAKYD FLAKYCTL [pytest args...]
# A shell in front so that `meson test --setup=valgrind` wraps only this
# shell: pytest runs natively and puts valgrind around flakyctl itself
# (FLAKY_VALGRIND=1).
set -e
FLAKYD=$1
FLAKYCTL=$2
shift 2
export FLAKYD FLAKYCTL
here=$(dirname "$0")
exec /usr/bin/pytest -q -p no:random_order -p no:cacheprovider -x "$@" "$here"
