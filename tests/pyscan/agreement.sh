#!/bin/bash
# Agreement test: flakyctl scan --format tsv must print exactly the rows of
# the ast-based oracle (oracle.py) over the test files of numpy, scipy and
# scikit-learn as Debian ships them, and over the tricky-syntax corpus, and
# both must skip the same files. The seeding signal is compared too: every
# test's line, class, name, seeded flag and number of findings, from
# flakyctl's JSON and `oracle.py --tests`. Any difference fails, with the
# diff shown.
#
# usage: agreement.sh FLAKYCTL [DIST_PACKAGES_DIR]
set -u
flakyctl=$1
dist=${2:-/usr/lib/python3/dist-packages}
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$python" ]; then
	echo "SKIP: $python not found"
	exit 77
fi
for pkg in numpy scipy sklearn; do
	if [ ! -d "$dist/$pkg" ]; then
		echo "SKIP: $dist/$pkg missing (apt-get install python3-numpy" \
		    "python3-scipy python3-sklearn)"
		exit 77
	fi
done

failed=0

# compare NAME ARGS...: run both over ARGS, compare rows and skipped files.
compare() {
	local name=$1
	shift
	"$flakyctl" scan --format tsv "$@" >"$tmp/$name.flakyctl" \
	    2>"$tmp/$name.flakyctl.err"
	local rc=$?
	"$python" "$here/oracle.py" "$@" >"$tmp/$name.oracle" \
	    2>"$tmp/$name.oracle.err"
	local orc=$?
	if [ $rc -ne 0 ] || [ $orc -ne 0 ]; then
		echo "FAIL $name: flakyctl exit $rc, oracle exit $orc"
		cat "$tmp/$name.flakyctl.err" "$tmp/$name.oracle.err" | head -20
		failed=1
		return
	fi
	sed -n 's/^flakyctl scan: \(.*\): skipped: .*/\1/p' \
	    "$tmp/$name.flakyctl.err" >"$tmp/$name.flakyctl.skipped"
	sed -n 's/^oracle: \(.*\): skipped: .*/\1/p' \
	    "$tmp/$name.oracle.err" >"$tmp/$name.oracle.skipped"
	local rows files skipped
	rows=$(wc -l <"$tmp/$name.oracle")
	skipped=$(wc -l <"$tmp/$name.oracle.skipped")
	if ! diff -u "$tmp/$name.oracle" "$tmp/$name.flakyctl" \
	    >"$tmp/$name.diff"; then
		echo "FAIL $name: rows differ (- oracle, + flakyctl):"
		head -100 "$tmp/$name.diff"
		failed=1
	fi
	if ! diff -u "$tmp/$name.oracle.skipped" "$tmp/$name.flakyctl.skipped"; then
		echo "FAIL $name: skipped files differ (- oracle, + flakyctl)"
		failed=1
	fi
	if [ "$rows" -eq 0 ]; then
		echo "FAIL $name: no findings at all"
		failed=1
	fi
	# The seeding signal, per test.
	"$flakyctl" scan --format json "$@" 2>/dev/null | "$python" -c '
import json, sys
for f in json.load(sys.stdin)["files"]:
    for t in ([] if f["skipped"] else f["tests"]):
        print("%s\t%d\t%s\t%s\t%d\t%d" % (f["path"], t["line"], t["class"],
            t["name"], t["seeded"], t["findings"]))
' >"$tmp/$name.flakyctl.tests"
	"$python" "$here/oracle.py" --tests "$@" >"$tmp/$name.oracle.tests" \
	    2>/dev/null
	if ! diff -u "$tmp/$name.oracle.tests" "$tmp/$name.flakyctl.tests" \
	    >"$tmp/$name.tests.diff"; then
		echo "FAIL $name: seeding signal differs (- oracle, + flakyctl):"
		head -60 "$tmp/$name.tests.diff"
		failed=1
	fi
	local ntests nseeded
	ntests=$(wc -l <"$tmp/$name.oracle.tests")
	nseeded=$(awk -F'\t' '$5 == 1' "$tmp/$name.oracle.tests" | wc -l)
	echo "$name: $rows rows, $skipped skipped files, $ntests tests" \
	    "($nseeded seeded) compared"
	cut -f3 "$tmp/$name.oracle" | sort | uniq -c | sed 's/^/    /'
}

mapfile -t files < <(cd "$dist" && find numpy scipy sklearn -type f \
    -path '*/tests/*' \( -name 'test_*.py' -o -name '*_test.py' \) |
    LC_ALL=C sort | sed "s|^|$dist/|")
echo "dist-packages: ${#files[@]} files"
if [ "${#files[@]}" -lt 100 ]; then
	echo "FAIL: expected hundreds of test files under $dist"
	failed=1
fi
compare dist "${files[@]}"
compare corpus "$here/corpus"

# The corpus must keep its invalid files: each one skipped by both.
ninvalid=$(find "$here/corpus/invalid" -name '*.py' | wc -l)
nskipped=$(grep -c '/invalid/' "$tmp/corpus.oracle.skipped")
if [ "$ninvalid" -ne "$nskipped" ]; then
	echo "FAIL: $ninvalid invalid corpus files, oracle skipped $nskipped"
	failed=1
fi

[ $failed -eq 0 ] && echo "PASS"
exit $failed
