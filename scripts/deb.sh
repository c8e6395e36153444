#!/bin/sh
# Build the Debian package from a clean copy of the tree and check it
# (the seed hook of seed sweeps, issue 34, among its files):
#   scripts/deb.sh [OUTDIR] [SOURCE.tar.xz]
#   scripts/deb.sh --check FILE.deb      (only the checks)
# The tree's tracked files (or the given meson dist tarball) are unpacked
# into a temporary directory, so dpkg-buildpackage writes nothing beside
# this checkout; the .deb lands in OUTDIR (default build-deb/). Then the
# file list (dpkg -c) must hold every path below, the maintainer scripts
# must create the flaky user, restart a running flakyd on upgrade (never
# stop it for good), stop it on remove and delete /var/lib/flaky on purge,
# the fields say where it lives and what completion needs, and lintian
# must report no error; a build from the tree must also have declared
# libpq-dev and libssl-dev, run the unit suites and built no benchmark.
# Exit 77 (skipped) when dpkg-buildpackage is missing. The build in a
# clean root, and the scripts run under systemd: scripts/deb-root.sh.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The checks of one .deb; 0 when it has what a build box needs.
check() {
	deb=$1
	status=0
	dpkg -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/files"
	for p in /usr/bin/flakyctl /usr/sbin/flakyd \
	    /lib/systemd/system/flakyd.service \
	    /usr/lib/sysusers.d/flaky.conf /usr/lib/tmpfiles.d/flaky.conf \
	    /usr/share/man/man1/flakyctl.1.gz \
	    /usr/share/man/man5/flaky.yaml.5.gz \
	    /usr/share/man/man8/flakyd.8.gz \
	    /usr/share/bash-completion/completions/flakyctl \
	    /usr/share/zsh/vendor-completions/_flakyctl \
	    /usr/share/doc/flaky/examples/flaky.yaml \
	    /usr/share/doc/flaky/copyright /usr/share/doc/flaky/changelog.gz \
	    /usr/share/doc/flaky/README.md.gz \
	    /usr/share/doc/flaky/architecture.md.gz \
	    /usr/share/doc/flaky/history.md.gz \
	    /usr/share/flaky/python/sitecustomize.py \
	    /usr/share/flaky/python/flaky_seed/__init__.py \
	    /usr/share/flaky/python/flaky_seed/pytest_plugin.py \
	    /usr/share/flaky/python/flaky_seed/unittest_hook.py \
	    /usr/share/flaky/python/flaky_seed/headroom.py \
	    /usr/share/flaky/python/flaky_seed/sites.py; do
		grep -qx "$p" "$tmp/files" || {
			echo "deb: $(basename "$deb") lacks $p"
			status=1
		}
	done
	# Nothing in /etc but the directory flakyctl init writes the config
	# into (flakyd says how).
	if grep -v '^/etc/$' "$tmp/files" | grep -v '^/etc/flaky/$' |
	    grep -q '^/etc/.'; then
		echo "deb: $(basename "$deb") installs into /etc:"
		grep '^/etc/.' "$tmp/files"
		status=1
	fi
	grep -qx '/etc/flaky/' "$tmp/files" || {
		echo "deb: $(basename "$deb") lacks the directory /etc/flaky"
		status=1
	}
	rm -rf "$tmp/control"
	dpkg-deb -e "$deb" "$tmp/control"
	grep -qs 'systemd-sysusers.*flaky\.conf' "$tmp/control/postinst" || {
		echo "deb: postinst does not create the flaky user (systemd-sysusers)"
		status=1
	}
	# Upgrade: restarted if running (try-restart), not stopped in preinst.
	grep -qs "deb-systemd-invoke try-restart 'flakyd.service'" \
	    "$tmp/control/postinst" || {
		echo "deb: postinst does not restart a running flakyd on upgrade"
		status=1
	}
	if grep -qs 'deb-systemd-invoke stop' "$tmp/control/preinst"; then
		echo "deb: preinst stops flakyd on upgrade, and nothing starts it"
		status=1
	fi
	grep -qs "deb-systemd-invoke stop 'flakyd.service'" \
	    "$tmp/control/prerm" || {
		echo "deb: no prerm stopping flakyd on remove"
		status=1
	}
	grep -qs 'rm -rf .*/var/lib/flaky' "$tmp/control/postrm" || {
		echo "deb: postrm does not delete /var/lib/flaky on purge"
		status=1
	}
	[ -n "$(dpkg-deb -f "$deb" Homepage)" ] || {
		echo "deb: no Homepage"
		status=1
	}
	dpkg-deb -f "$deb" Recommends | grep -qw bash-completion || {
		echo "deb: bash-completion not recommended (the completion needs it)"
		status=1
	}
	if command -v lintian >/dev/null 2>&1; then
		lintian --fail-on error "$deb" >"$tmp/lintian" 2>&1 || {
			echo "deb: lintian errors:"
			status=1
		}
		grep -v '^running with root privileges' "$tmp/lintian" || true
	else
		echo "deb: lintian not found: not checked"
	fi
	[ $status -eq 0 ] && echo "deb: $deb: $(wc -l <"$tmp/files") paths, ok"
	return $status
}

if [ "${1:-}" = "--check" ]; then
	check "$2"
	exit $?
fi
out=${1:-build-deb}
tarball=${2:-}
command -v dpkg-buildpackage >/dev/null 2>&1 || {
	echo "deb: dpkg-buildpackage not found (scripts/deps.sh installs it): skipped"
	exit 77
}
mkdir -p "$out"
out=$(cd "$out" && pwd)

mkdir "$tmp/src"
if [ -n "$tarball" ]; then
	tar -C "$tmp/src" --strip-components=1 -xf "$tarball"
else
	# tracked files as they are in the work tree (a file deleted but not
	# yet committed is left out)
	git ls-files -z | xargs -0 sh -c 'for f; do [ -e "$f" ] &&
	    printf "%s\0" "$f"; done' sh | tar --null -T - -cf - |
	    tar -C "$tmp/src" -xf -
fi
(cd "$tmp/src" && dpkg-buildpackage -us -uc -b >"$tmp/build.log" 2>&1) || {
	tail -40 "$tmp/build.log"
	echo "deb: dpkg-buildpackage failed"
	exit 1
}
deb=$(ls "$tmp"/flaky_*.deb)
cp "$deb" "$tmp"/*.buildinfo "$tmp"/*.changes "$out"/
deb=$out/$(basename "$deb")

# What only the build shows: the declared Build-Depends (a build here has
# scripts/deps.sh's packages; scripts/deb-root.sh proves them in a clean
# root), the unit suites run, no benchmark built.
status=0
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$tmp/src/debian/control")
for p in libpq-dev libssl-dev check; do
	printf '%s\n' "$bdeps" | grep -Eq "[ ,]$p([ ,(<]|\$)" || {
		echo "deb: Build-Depends lacks $p"
		status=1
	}
done
case " ${DEB_BUILD_OPTIONS:-} " in
*" nocheck "*) echo "deb: DEB_BUILD_OPTIONS=nocheck: unit suites not run" ;;
*)	grep -Eq '^Ok: +[1-9]' "$tmp/build.log" && grep -Eq '^Fail: +0' \
	    "$tmp/build.log" || {
		echo "deb: the build did not run the unit suites (dh_auto_test)"
		status=1
	} ;;
esac
if ls -d "$tmp"/src/obj-*/bench >/dev/null 2>&1; then
	echo "deb: the build compiled bench/, which is never installed"
	status=1
fi
[ -f "$tmp/src/debian/tests/control" ] || {
	echo "deb: no debian/tests/control (autopkgtest)"
	status=1
}
check "$deb" || status=1
exit $status
