#!/bin/sh
# The CLI under valgrind: no leaks, no memory errors, on a real analyze of
# the unittest demo suite, a report in every format, and an error path.
# Usage: valgrind-cli.sh FLAKYCTL EXAMPLES
set -eu
ctl=$1
examples=$2
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$examples/demo-unittest" "$tmp/suite"
vg="valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99
    --trace-children=no"
db=$tmp/flaky.db
run() {
	echo "+ flakyctl $*"
	rc=0
	(cd "${RUN_DIR:-$tmp/suite}" && $vg "$ctl" "$@" >"$tmp/out" \
	    2>"$tmp/err") || rc=$?
	if [ "$rc" -eq 99 ]; then
		cat "$tmp/err"
		echo "FAIL: valgrind found errors or leaks in: flakyctl $*"
		exit 1
	fi
	echo "  exit $rc"
	return 0
}
run --db "$db" analyze --runs 3 --jobs 2 -- /usr/bin/python3 -m unittest -v
run --db "$db" analyze --runs 2 --format json -- /usr/bin/python3 -m unittest -v
for f in table json csv markdown; do
	run --db "$db" report --since 1d --format "$f"
done
# what diagnosis prints, a test skipped in every run among them (issue 28)
run --db "$db" triage
run --db "$db" --format json triage
run --db "$db" show test_warehouse
run --db "$db" ticket test_warehouse
run --db "$db" --format json ticket test_reindex
run --db "$db" analyze --runs 2 nosuchcommand-xyz
run --db "$db" analyze --runs 0 true
run --db "$db" analyze --runs 2 -- /bin/sh -c 'echo no runner; exit 3'
run --db "$db" report --target nosuch
run --db "$db" report --since yesterday
run --db /proc/nope/x.db analyze true
# flakyctl ci (issue 30): retries, every format, new tests, a quarantine
# file, exit 2 of a retry that is refused, errors; then uploads to serve
cp -r "$examples/demo-ci/unittest" "$tmp/ci"
rm -f "$tmp/ci/shop.py"
cp "$examples/demo-ci/pytest/shop.py" "$tmp/ci/shop.py"
cid=$tmp/ci.db
export DEMO_SEED=4 DEMO_STATE="$tmp/state"
mkdir -p "$DEMO_STATE"
runci() {
	echo "+ flakyctl $*"
	rc=0
	(cd "$tmp/ci" && $vg "$ctl" "$@" >"$tmp/out" 2>"$tmp/err") || rc=$?
	if [ "$rc" -eq 99 ]; then
		cat "$tmp/err"
		echo "FAIL: valgrind found errors or leaks in: flakyctl $*"
		exit 1
	fi
	echo "  exit $rc"
}
runci --db "$cid" ci --branch main --retries 0 -- /usr/bin/python3 -m unittest test_shop
echo test_shop.ShopTest.test_inventory_sync >"$tmp/q.txt"
for f in table json github junit; do
	GITHUB_STEP_SUMMARY=$tmp/summary.md runci --db "$cid" --format "$f" ci \
	    --branch feature --new-tests 3 --quarantine-file "$tmp/q.txt" \
	    -- /usr/bin/python3 -m unittest
done
runci --db "$cid" ci --retries 1 -- /bin/sh -c "echo 'not ok 1 - a'; echo 1..1; exit 1"
runci --db "$cid" ci -- nosuchcommand-xyz
runci --db "$cid" ci --retries 99 -- true
runci --db "$cid" ci --quarantine-file /nonexistent -- true
"$ctl" --db "$tmp/srv.db" token create --scope upload >"$tmp/up.token" 2>/dev/null
"$ctl" --db "$tmp/srv.db" serve --uploads --listen 127.0.0.1:0 >"$tmp/serve.out" 2>&1 &
srv=$!
i=0
until grep -q "^serving" "$tmp/serve.out"; do
	i=$((i + 1))
	[ "$i" -lt 500 ] || { echo "FAIL: serve did not start"; kill "$srv"; exit 1; }
	sleep 0.02
done
url=$(sed -n 's|.*\(http://127.0.0.1:[0-9]*\)/.*|\1|p' "$tmp/serve.out")
FLAKY_TOKEN=$(cat "$tmp/up.token") runci ci --server "$url" --new-tests 2 \
    --job unit --attempt 1 -- /usr/bin/python3 -m unittest
FLAKY_TOKEN=nope runci ci --server "$url" -- /usr/bin/python3 -m unittest test_shop
kill "$srv"
wait "$srv" || true
# tokens and uploads (issue 29): to a file, twice (stored once), a bad
# file refused whole, a server that is not there (the HTTP client)
run --db "$db" token create --scope upload --name ci
run --db "$db" --format json token list
run --db "$db" token revoke ci
cat >"$tmp/r.xml" <<EOF
<testsuite name="s" tests="2"><testcase classname="s" name="a" time="0.1"/>
<testcase classname="s" name="b"><failure message="x">y</failure></testcase>
</testsuite>
EOF
printf '<testsuite><testcase name="a">' >"$tmp/bad.xml"
run upload --server "$db" --target up --revision r1 --job unit "$tmp/r.xml"
run upload --server "$db" --target up --revision r1 --job unit \
    --format json "$tmp/r.xml"
run upload --server "$db" --target up "$tmp/r.xml" "$tmp/bad.xml"
FLAKY_TOKEN=flaky_x run upload --server http://127.0.0.1:9 --target up --retries 0 \
    "$tmp/r.xml"
# a hung run's stacks (issue 33): taken on the capture's thread, folded,
# stored, then shown; the third run of the demo hangs
cp -r "$examples/hangs/pytest" "$tmp/hang"
RUN_DIR=$tmp/hang run --db "$db" analyze --runs 3 --jobs 1 --timeout 3s \
    -- /usr/bin/pytest
RUN_DIR=$tmp/hang run --db "$db" show test_client.py::test_reply
RUN_DIR=$tmp/hang run --db "$db" --format json show test_client.py::test_reply
RUN_DIR=$tmp/hang run --db "$db" ticket test_client.py::test_reply
grep -q 'Where it hung' "$tmp/out" || { echo "FAIL: no stacks in the ticket"; exit 1; }
echo "valgrind: no leaks, no errors"
