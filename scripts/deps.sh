#!/bin/sh
# Install what flaky needs to build, test and run its examples on Debian 12.
# Idempotent; needs root (or sudo). The runners of the native demos
# (examples/demo-{cargo,gtest,rspec,phpunit}) are Debian's: cargo and rustc
# (not a rustup toolchain), libgtest-dev with cmake, ruby-rspec, phpunit.
# python3-pytest-rerunfailures is what flakyctl ci is compared with
# (tests/integration/ci_command, docs/ci.md); xmllint (libxml2-utils)
# checks its JUnit against a schema.
# gdb and elfutils (eu-stack) take the stacks of a hung native run (issue
# 33, tests/integration/hangs); a JDK is used by its Java demo when present.
# Node.js 20 and its npm must already be on the machine: Debian's npm
# package conflicts with it, so Jest, Vitest, Playwright Test and Mocha
# come from the npm registry at the versions pinned in examples/demo-*.
set -eu
cd "$(dirname "$0")/.."

PKGS="build-essential meson ninja-build pkg-config git
postgresql-15 libpq-dev
libsqlite3-dev zlib1g-dev libevent-dev libyaml-dev libexpat1-dev check sqlite3 tzdata
libssl-dev openssl
python3 python3-pytest python3-pytest-timeout python3-pytest-random-order python3-yaml
python3-pytest-xdist python3-numpy python3-scipy python3-sklearn
python3-pytest-rerunfailures
valgrind clang libclang-rt-14-dev procps hyperfine golang-go perl
chromium bsdutils systemd libxml2-utils zsh
cmake libgtest-dev cargo rustc ruby-rspec phpunit
gdb elfutils
dpkg-dev debhelper fakeroot lintian debootstrap systemd-container"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
	    missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "deps: installing$missing"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends $missing >/dev/null
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "deps: npm not found: install Node.js 20 with its npm (not Debian's npm package)" >&2
	exit 1
fi
if [ ! -x examples/demo-jest/node_modules/.bin/jest ]; then
	echo "deps: installing Jest (pinned in examples/demo-jest/package-lock.json)"
	(cd examples/demo-jest && npm ci --no-audit --no-fund --loglevel=error)
fi
# The demos of Vitest, Playwright Test and Mocha (node:test needs none),
# pinned by their package-lock.json. Playwright drives Debian's chromium
# (PKGS): no browser is downloaded.
for d in demo-vitest:vitest demo-playwright:playwright demo-mocha:mocha; do
	if [ ! -x "examples/${d%%:*}/node_modules/.bin/${d##*:}" ]; then
		echo "deps: installing ${d##*:} (pinned in examples/${d%%:*}/package-lock.json)"
		(cd "examples/${d%%:*}" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
		    npm ci --no-audit --no-fund --loglevel=error)
	fi
done
if [ ! -d tests/integration/web/node_modules/puppeteer-core ]; then
	echo "deps: installing puppeteer-core (pinned in tests/integration/web/package-lock.json)"
	(cd tests/integration/web && npm ci --no-audit --no-fund --loglevel=error)
fi
