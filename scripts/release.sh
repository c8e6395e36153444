#!/bin/sh
# Make a release: scripts/release.sh [--out DIR] VERSION
#
# 1. The tree: VERSION is N.N.N, the tracked files have no change that is
#    not committed, meson.build's version and debian/changelog's top entry
#    say VERSION, and tag vVERSION does not exist yet.
# 2. The source: `meson dist` (git archive of HEAD) into DIR (default
#    build-release/VERSION), then that tarball configured, built and its
#    unit suite run in a fresh directory. The rest of the tests (the
#    integration suites, ASan, valgrind, fuzzing, the package check) are
#    CI's, scripts/test.sh on the same commit: release after CI passed.
# 3. The .deb, built from the tarball (scripts/deb.sh: file list, sysusers,
#    lintian checked).
# 4. SHA256SUMS of the tarball and the .deb, and only then the annotated
#    tag vVERSION on HEAD (the commit both were built from), so a failed
#    step leaves no tag behind. Pushing the tag is left to the person.
# docs/release.md says the same, with what to check before.
set -eu
cd "$(dirname "$0")/.."

die() {
	echo "release: $*" >&2
	exit 1
}

out=""
if [ "${1:-}" = "--out" ]; then
	[ $# -ge 2 ] || die "--out: expected a directory"
	out=$2
	shift 2
fi
[ $# -eq 1 ] || die "usage: scripts/release.sh [--out DIR] VERSION"
version=$1
echo "$version" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' ||
    die "expected a version N.N.N, got '$version'"
out=${out:-build-release/$version}

# 1. the tree
git rev-parse --git-dir >/dev/null 2>&1 || die "not a git checkout"
git update-index -q --refresh
git diff --quiet HEAD -- ||
    die "the tree has changes not committed (git status): commit or stash them"
meson_version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -1)
[ "$meson_version" = "$version" ] ||
    die "meson.build says version '$meson_version', expected '$version': edit project(version : ...) and commit"
deb_version=$(dpkg-parsechangelog -S Version 2>/dev/null ||
    sed -n '1s/^flaky (\([^)]*\)).*/\1/p' debian/changelog)
[ "$deb_version" = "$version" ] ||
    die "debian/changelog says '$deb_version', expected '$version': add an entry (dch -v $version) and commit"
if git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
	die "tag v$version exists already"
fi
head=$(git rev-parse HEAD)

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/flaky-"$version".tar.xz* "$out"/flaky_"$version"_*.deb \
    "$out"/SHA256SUMS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 2. the source tarball, built and unit-tested as shipped
echo "release: meson dist of $head"
meson setup "$work/dist" >/dev/null
meson dist -C "$work/dist" --no-tests --formats xztar >"$work/dist.log" 2>&1 ||
    { cat "$work/dist.log"; die "meson dist failed"; }
tarball=$work/dist/meson-dist/flaky-$version.tar.xz
[ -f "$tarball" ] || die "meson dist wrote no flaky-$version.tar.xz"
mkdir "$work/check"
tar -C "$work/check" --strip-components=1 -xf "$tarball"
echo "release: building the tarball and running its unit suite"
(cd "$work/check" && meson setup build >/dev/null && ninja -C build >/dev/null &&
    meson test -C build --suite unit --num-processes 2 >"$work/unit.log" 2>&1) ||
    { tail -30 "$work/unit.log" 2>/dev/null; die "the tarball does not build or its unit suite fails"; }
cp "$tarball" "$out/"

# 3. the Debian package, from the same tarball
echo "release: building the .deb"
scripts/deb.sh "$out" "$tarball" || die "the .deb failed to build or its checks failed"
rm -f "$out"/*.buildinfo "$out"/*.changes

# 4. checksums, then the tag on the commit they came from
[ "$(git rev-parse HEAD)" = "$head" ] || die "HEAD moved during the release"
(cd "$out" && sha256sum "flaky-$version.tar.xz" flaky_"$version"_*.deb >SHA256SUMS)
git tag -a "v$version" -m "flaky $version" "$head"
echo "release: tagged v$version ($head); in $out:"
cat "$out/SHA256SUMS"
echo "release: push the tag with: git push origin v$version"
