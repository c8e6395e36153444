#!/bin/sh
# The main job: install what is missing, build, and collect evidence on the
# demo suites into examples/flaky.db.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build --buildtype=debugoptimized >/dev/null
ninja -C build >/dev/null
db=$PWD/examples/flaky.db
ctl=$PWD/build/cli/flakyctl
(cd examples/demo-pytest && "$ctl" --db "$db" analyze --runs 30 --jobs 2 \
    --target demo-pytest -- /usr/bin/pytest -v -p no:cacheprovider -p no:random_order)
(cd examples/demo-unittest && "$ctl" --db "$db" analyze --runs 30 --jobs 2 \
    --target demo-unittest -- /usr/bin/python3 -m unittest -v)
(cd examples/demo-jest && "$ctl" --db "$db" analyze --runs 10 --jobs 2 \
    --target demo-jest -- node_modules/.bin/jest --verbose --ci)
echo
echo "evidence stored in $db; try:"
echo "  $ctl --db $db report --since 1d"
echo "  sqlite3 $db 'SELECT * FROM flaky_tests'"
