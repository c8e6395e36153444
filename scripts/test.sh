#!/bin/sh
# Build and run every test suite: unit and integration in a normal build,
# the same under AddressSanitizer and UndefinedBehaviorSanitizer, and the
# CLI under valgrind, then bounded fuzzing. Prints "N passed, N failed" at the end.
set -eu
cd "$(dirname "$0")/.."

[ -d build ] || meson setup build --buildtype=debugoptimized -Dwerror=true >/dev/null
[ -d build-asan ] || meson setup build-asan --buildtype=debug -Dwerror=true \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null

passed=0
failed=0
# meson test's summary lines: "Ok: N" and "Fail: N" (plus timeouts).
count() {
	ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$1" | tail -1)
	bad=$(sed -n 's/^\(Fail\|Timeout\|Unexpected Pass\): *\([0-9]*\).*/\2/p' "$1" |
	    awk '{s += $1} END {print s + 0}')
	passed=$((passed + ${ok:-0}))
	failed=$((failed + bad))
}

# Seconds each phase took, printed at the end: what CI's time goes to
# (docs/performance.md, "CI time").
times=
t0=$(date +%s)
lap() {
	t1=$(date +%s)
	times="$times $1 $((t1 - t0))s"
	t0=$t1
}

status=0
ninja -C build
lap build
# Three suites at a time on two CPUs: the longest (daemon, hangs,
# analyze) mostly wait on schedules and time limits, and every suite
# is written to pass at a load well above this (no bare sleeps).
meson test -C build --print-errorlogs --num-processes 3 >build/test.out 2>&1 || status=1
cat build/test.out | grep -vE '^ *$' | tail -40
count build/test.out
lap test

ninja -C build-asan
lap build-asan
meson test -C build-asan --setup=asan --print-errorlogs --num-processes 3 \
    >build-asan/test.out 2>&1 || status=1
tail -40 build-asan/test.out
count build-asan/test.out
lap test-asan

# Bounded, seeded fuzzing of every parser of untrusted text.
if command -v clang >/dev/null 2>&1; then
	if scripts/fuzz.sh; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		status=1
	fi
	lap fuzz
fi

# The Debian package, built from a clean copy of the tree (its unit
# suites run inside, as in any build of the package), its file list,
# maintainer scripts and lintian checked (scripts/deb.sh). Bounded: a
# build took 77 s on two shared cores (158 s at a load of 17). The build
# in a clean root and the scripts under systemd (scripts/deb-root.sh,
# minutes and a mirror) are not run here: docs/release.md.
# Skipped only when dpkg-buildpackage is missing (exit 77).
deb_status=0
mkdir -p build-deb
timeout 300 scripts/deb.sh build-deb >build-deb/deb.log 2>&1 || deb_status=$?
cat build-deb/deb.log
case $deb_status in
0)	passed=$((passed + 1)) ;;
77)	;;
*)	[ $deb_status -eq 124 ] && echo "deb: not built within 5 minutes"
	failed=$((failed + 1))
	status=1 ;;
esac
lap deb

# The layout figures (issue 13) are a gate: no file over 800 lines, no
# cycle between files or folders, programs on public headers only, no
# stale path in the docs, under 1% duplicated lines.
if scripts/layout.sh --check --testlog build/meson-logs/testlog.txt; then
	passed=$((passed + 1))
else
	echo "layout: a figure misses its goal (above)"
	failed=$((failed + 1))
	status=1
fi

lap layout
echo "time:$times"
echo "$passed passed, $failed failed"
exit $status
