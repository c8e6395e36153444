#!/bin/sh
# One run of a polluter demo, from its directory (single/ or pair/): run N
# of the directory is also the random-order seed, so every run has a fixed
# order and fixed outcomes, and nothing random decides whether a polluter
# pollutes. See docs/triage.md, "The smallest polluter".
n=$( (flock 9 || exit 2
	n=$(( $(cat .run-counter 2>/dev/null || echo 0) + 1 ))
	echo "$n" >.run-counter
	echo "$n") 9>>.run-lock) || exit 2
exec /usr/bin/pytest -p random_order --random-order-bucket=global \
    --random-order-seed="$n" -v "$@"
