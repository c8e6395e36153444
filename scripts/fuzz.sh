#!/bin/sh
# Bounded libFuzzer runs (clang, with ASan and UBSan) of everything that
# parses untrusted text: runner output, JUnit XML, the YAML schedule,
# Python source, the control protocol's JSON and request lines, and what
# an upload's client sends (its request, query and body). A crash, leak, hang or sanitizer report fails the script and
# leaves the input in $FUZZ_OUT/<target>/.
#
# The runs are deterministic: a fixed seed and a fixed number of inputs per
# target (scaled by SCALE, default 1), with SECONDS per target only as a
# cap, so a test run cannot fail on one day and pass on the next with the
# same code. Inputs that once failed (tests/fuzz/regress/) are replayed
# through every target first.
#
# Every target runs with a memory and a per-input time limit, and the
# parsers with bounds of their own (docs/limits.md) with tighter ones and a
# dictionary (tests/fuzz/*.dict) that reaches anchors, aliases, nesting and
# entities: an input that expands, nests or holds past its bound is a
# finding, not a slow test.
#
# The builds run at once and the targets FUZZ_JOBS at a time (default:
# one per CPU), each still one seeded process: every target runs the same
# inputs as one after the other, only sooner. The targets' lines are
# printed in a fixed order once all have ended.
#
# usage: scripts/fuzz.sh [SECONDS cap per target]    (default 120)
#        scripts/fuzz.sh --run TARGET SECONDS        (one target, built)
set -eu
scale=${SCALE:-1}
src=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-/tmp/flaky-fuzz}
# The longest first (the config's), so the others fill the other CPUs.
targets="fuzz_config fuzz_parse fuzz_junit fuzz_pyscan fuzz_control fuzz_upload"

# Up to 200 seed files of the given folders.
seed() {
	find "$@" -type f -size -256k 2>/dev/null | head -200
}
# One built target: its seeds, the inputs that once failed, then the
# seeded run. Prints what it found; non-zero on a finding.
run_target() {
	t=$1
	secs=$2
	case $t in
	fuzz_parse) seeds=$(seed "$src/tests/fixtures/pytest" \
	    "$src/tests/fixtures/unittest" "$src/tests/fixtures/jest" \
	    "$src/tests/fixtures/gotest" "$src/tests/fixtures/tap" \
	    "$src/tests/fixtures/cargo" "$src/tests/fixtures/gtest" \
	    "$src/tests/fixtures/rspec" "$src/tests/fixtures/phpunit" \
	    "$src/tests/fixtures/vitest" "$src/tests/fixtures/playwright" \
	    "$src/tests/fixtures/mocha" "$src/tests/fixtures/nodetest" \
	    -name '*.txt') ;;
	fuzz_junit) seeds=$(seed "$src/tests/fixtures/junit" -name '*.xml') ;;
	fuzz_config) seeds=$(seed "$src/tests/fixtures/config" "$src/examples" -name '*.yaml') ;;
	fuzz_pyscan) seeds=$(seed "$src/tests/pyscan/corpus" -name '*.py') ;;
	fuzz_control) seeds= ;;
	fuzz_upload) seeds= ;;
	esac
	for f in $seeds; do cp "$f" "$out/$t/corpus/" 2>/dev/null || true; done
	case $t in
	# From the seeds alone on 2 CPUs, each ends well inside the cap
	# (config ~3,000 inputs/s, parse ~650), so the
	# cap never decides which inputs ran.
	fuzz_parse) runs=20000 ;;
	fuzz_pyscan) runs=150000 ;;
	fuzz_config) runs=250000 ;;
	fuzz_upload) runs=300000 ;;
	*) runs=400000 ;;
	esac
	runs=$((runs * scale))
	# Memory (MB, with ASan's own) and seconds per input. The config and
	# JUnit readers refuse bombs in a few MB and milliseconds, so their
	# bounds are tight enough that the bombs of issue 14 (1.27 GB, 16 s)
	# would fail the run.
	case $t in
	fuzz_config) limits="-rss_limit_mb=512 -timeout=5 -dict=$src/tests/fuzz/yaml.dict" ;;
	fuzz_junit) limits="-rss_limit_mb=512 -timeout=5 -dict=$src/tests/fuzz/xml.dict" ;;
	*) limits="-rss_limit_mb=2048 -timeout=10" ;;
	esac
	# shellcheck disable=SC2086
	if ! (cd "$out/$t" && ./fuzz $limits "$src"/tests/fuzz/regress/* >regress.log 2>&1); then
		tail -20 "$out/$t/regress.log"
		echo "fuzz: $t FAILED on tests/fuzz/regress"
		return 1
	fi
	echo "fuzz: $t, $runs inputs (seed 1, at most ${secs}s)"
	# shellcheck disable=SC2086
	if ! (cd "$out/$t" && ./fuzz -seed=1 -runs="$runs" \
	    -max_total_time="$secs" $limits \
	    -max_len=65536 -print_final_stats=1 corpus \
	    >log 2>&1); then
		tail -40 "$out/$t/log"
		echo "fuzz: $t FAILED (input in $out/$t)"
		return 1
	fi
	grep -E "stat::number_of_executed_units" "$out/$t/log" || true
}

if [ "${1-}" = --run ]; then
	run_target "$2" "$3"
	exit
fi
secs=${1:-120}
mkdir -p "$out/inc"
printf '#pragma once\n#define FLAKY_VERSION "fuzz"\n' >"$out/inc/buildconf.h"
cflags="-g -O1 -fsanitize=fuzzer,address,undefined
    -fno-sanitize-recover=undefined -D_GNU_SOURCE -I$out/inc -iquote $src/lib"
# Every parser: a new lib/parse/NAME.c is fuzzed without a change here.
parse="$src/lib/parse/*.c $src/lib/util/util.c"

# Each target starts from its seeds alone: a corpus left by an earlier
# run would make this run another one (CI once met an input that a
# clean run does not reach).
build() {
	name=$1; shift
	rm -rf "${out:?}/$name"
	mkdir -p "$out/$name/corpus"
	# shellcheck disable=SC2086
	clang $cflags -o "$out/$name/fuzz" "$src/tests/fuzz/$name.c" "$@"
}
# Each build is a clang process of its own: all at once.
pids=
# shellcheck disable=SC2086
build fuzz_parse $parse -lexpat & pids="$pids $!"
# shellcheck disable=SC2086
build fuzz_junit $parse -lexpat & pids="$pids $!"
# Every part of the config: a new lib/config/*.c needs no change here.
build fuzz_config "$src"/lib/config/*.c \
    "$src/lib/sched/sched.c" "$src/lib/sched/tz.c" "$src/lib/util/util.c" \
    "$src/lib/util/path.c" "$src/lib/util/box.c" -lyaml & pids="$pids $!"
# The scanner's codec table is generated, as meson generates it.
python3 "$src/lib/scan/gen-codecs.py" "$src/lib/scan/codecs.txt" \
    "$out/inc/scan-codecs.c"
build fuzz_pyscan "$src"/lib/scan/*.c "$out/inc/scan-codecs.c" \
    "$src/lib/util/util.c" & pids="$pids $!"
build fuzz_control "$src/lib/json/json.c" "$src/lib/json/json_read.c" \
    "$src/lib/control/control.c" "$src/lib/util/util.c" & pids="$pids $!"
# The upload's door and body: their partners in the server are the
# harness's own (tests/fuzz/fuzz_upload.c).
build fuzz_upload "$src/lib/http/door.c" "$src/lib/http/upload_body.c" \
    "$src/lib/util/util.c" "$src/lib/util/box.c" -levent -lz & pids="$pids $!"
built=0
for p in $pids; do
	wait "$p" || built=1
done
[ $built -eq 0 ] || { echo "fuzz: a target did not build (above)"; exit 1; }

# The control target's seeds: replies as flakyd writes them, and requests.
c="$out/fuzz_control/corpus"
printf '{"ok":true,"pid":1,"version":"0.1.0","started_ms":1,"started":"2026-11-30T03:00:00+01:00","targets":[{"name":"a","schedule":null,"next_fire_ms":null,"next_fire":null,"state":"idle","queued":false,"last":{"run_id":1,"status":"done","tests":2,"failures":0}}]}' >"$c/status.json"
printf '{"ok":false,"error":"no target named \\"x\\" \\u00e9\\ud83d\\ude00 \\ufffd"}' >"$c/error.json"
printf '[1,-0.5e-3,true,false,null,"\\/\\b\\f\\n\\r\\t",{},[]]' >"$c/types.json"
printf 'run manual 3' >"$c/run.txt"
printf 'status' >"$c/status.txt"
# The upload target's: the first byte chooses the part (0, 1: a
# connection's bytes; 2: a query; 3: a body on disk).
c="$out/fuzz_upload/corpus"
printf '\000POST /api/v1/uploads?target=x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789' >"$c/length"
printf '\001POST /api/v1/uploads HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n5\r\nhello\r\n0\r\n\r\n' >"$c/chunked"
printf '\000GET /healthz HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n' >"$c/get"
printf '\002target=web&revision=abc&branch=main&pr=5&job=unit&job_url=https://ci/1&attempt=2&box=b1&at=2026-01-01T00:00:00Z&ci=github' >"$c/query"
printf '\003--abcd\r\nContent-Disposition: form-data; name="f"; filename="a.xml"\r\n\r\n<x/>\r\n--abcd--\r\n' >"$c/multipart"

status=0
# ASan keeps 256 MB of freed memory in quarantine by default, and that
# counts in -rss_limit_mb: with a grown corpus the config fuzzer stood at
# 516 MB before its first new input. 16 MB keeps use-after-free checks
# while the limits below measure the parsers, not the quarantine.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
export ASAN_OPTIONS
# Each target's lines go to its report, printed below in order.
jobs=${FUZZ_JOBS:-$(nproc)}
# shellcheck disable=SC2086,SC2016
printf '%s\n' $targets | xargs -P "$jobs" -I{} \
    sh -c '"$0" --run "$1" "$2" >"$3/$1/report" 2>&1' \
    "$src/scripts/fuzz.sh" {} "$secs" "$out" || status=1
for t in $targets; do
	cat "$out/$t/report"
done
exit $status
