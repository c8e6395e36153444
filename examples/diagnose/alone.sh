#!/bin/sh
# One test alone (the isolate: template of examples/diagnose/flaky.yaml):
# the next run number, as run.sh takes it, without the random order.
here=$(cd "$(dirname "$0")" && pwd)
n=$(/usr/bin/python3 "$here/counter.py") || exit 2
export DEMO_RUN="$n"
cd "$here" && exec /usr/bin/pytest -p no:random_order -v "$@"
