#!/bin/sh
# One run of the diagnosis demo. The run number is also the random-order
# seed, so every run is reproducible: run N always has the same order and
# the same outcomes (docs/triage.md says which test fails when, and why).
here=$(cd "$(dirname "$0")" && pwd)
n=$(/usr/bin/python3 "$here/counter.py") || exit 2
export DEMO_RUN="$n"
cd "$here" && exec /usr/bin/pytest -p random_order --random-order \
    --random-order-seed="$n" -v \
    --durations=0 --durations-min=0 "$@"
