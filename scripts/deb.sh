#!/bin/sh
# Build the Debian package from a clean copy of the tree and check it:
#   scripts/deb.sh [OUTDIR] [SOURCE.tar.xz]
#   scripts/deb.sh --check FILE.deb      (only the checks)
# The tree's tracked files (or the given meson dist tarball) are unpacked
# into a temporary directory, so dpkg-buildpackage writes nothing beside
# this checkout; the .deb lands in OUTDIR (default build-deb/). Then the
# file list (dpkg -c) must hold every path below, the maintainer scripts
# must create the flaky user, and lintian must report no error. Exit 77
# (skipped) when dpkg-buildpackage is missing.
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
	    /usr/share/doc/flaky/history.md.gz; do
		grep -qx "$p" "$tmp/files" || {
			echo "deb: $(basename "$deb") lacks $p"
			status=1
		}
	done
	# Nothing in /etc: flakyd says how to write its config (flakyctl init).
	if grep -q '^/etc/.' "$tmp/files"; then
		echo "deb: $(basename "$deb") installs into /etc:"
		grep '^/etc/.' "$tmp/files"
		status=1
	fi
	rm -rf "$tmp/control"
	dpkg-deb -e "$deb" "$tmp/control"
	grep -qs 'systemd-sysusers.*flaky\.conf' "$tmp/control/postinst" || {
		echo "deb: postinst does not create the flaky user (systemd-sysusers)"
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

check "$deb"
