#!/bin/sh
# The main job: install what is missing (Debian 12), build, and start flakyd
# in the foreground on the example schedule (examples/flaky.yaml), which
# reruns the demo suites every few seconds into examples/flaky.db. Stop it
# with ^C (SIGINT: running suites are ended and recorded as interrupted).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build --buildtype=debugoptimized >/dev/null
ninja -C build >/dev/null
cat <<MSG
flakyd: collecting evidence into examples/flaky.db; in another terminal:
  build/cli/flakyctl --config examples/flaky.yaml status
  build/cli/flakyctl --config examples/flaky.yaml report --since 1d
  sqlite3 examples/flaky.db "SELECT * FROM flaky_tests"
MSG
exec build/daemon/flakyd --config examples/flaky.yaml --foreground
