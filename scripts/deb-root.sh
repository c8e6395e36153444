#!/bin/sh
# The Debian package as a Debian admin meets it, in clean Debian 12 roots
# (issue 28, "The package"):
#   scripts/deb-root.sh [--keep] [--from OLD.deb] [--deb FILE.deb]
#                       [--mirror URL] [WORKDIR]
# 1. debootstrap a minimal bookworm root (with systemd);
# 2. build the package in a copy of it, as an unprivileged user, with
#    nothing installed but build-essential and the Build-Depends of
#    debian/control (apt-get build-dep): they are proved complete; the
#    unit suites run in that build, no benchmark is built;
# 3. boot another copy with systemd as PID 1 (systemd-nspawn --boot) and
#    there: the autopkgtest scripts (debian/tests), a fresh install (user,
#    directories, unit installed but neither enabled nor started), init
#    into /etc/flaky and --check-config as a user, flakyd enabled and
#    running a trigger, an ad-hoc analyze as root that leaves the
#    daemon's database alone, an upgrade to a newer version while flakyd
#    runs (it keeps running: restarted, new pid), a member of the flaky
#    group reading the database with flakyd stopped, remove (flakyd
#    stops) and purge (what README.md, "Install", says remains).
# --from OLD.deb installs that package first and upgrades from it (e.g.
# a release built before this script). --deb FILE.deb tests that package
# instead of building one (step 2 is skipped: nothing is proved of the
# Build-Depends then). WORKDIR (default a new directory under /var/tmp) is
# removed at the end unless --keep; the base root of a kept WORKDIR is
# used again. Needs root,
# debootstrap, systemd-nspawn (systemd-container) and the network to a
# Debian mirror; exit 77 (skipped) when a tool is missing. Takes a few
# minutes; scripts/deb.sh is the quick check CI runs.
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)

keep=0
from=""
given=""
mirror=http://deb.debian.org/debian
while [ $# -gt 0 ]; do
	case $1 in
	--keep)	keep=1 ;;
	--from)	from=$(realpath "$2"); shift ;;
	--deb)	given=$(realpath "$2"); shift ;;
	--mirror) mirror=$2; shift ;;
	-*)	echo "usage: $0 [--keep] [--from OLD.deb] [--deb FILE.deb]" \
		    "[--mirror URL] [WORKDIR]" >&2
		exit 2 ;;
	*)	break ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "deb-root: needs root" >&2; exit 2; }
for t in debootstrap systemd-nspawn nsenter dpkg-deb; do
	command -v $t >/dev/null 2>&1 || {
		echo "deb-root: $t not found (apt-get install debootstrap systemd-container): skipped"
		exit 77
	}
done
work=${1:-$(mktemp -d /var/tmp/flaky-deb-root.XXXXXX)}
mkdir -p "$work"
work=$(realpath "$work")
name=flaky-deb-$$
boot_pid=""
t0=$(date +%s)
last=$t0

# The time since the last lap, and in all.
lap() {
	now=$(date +%s)
	echo "deb-root: $1: $((now - last)) s (total $((now - t0)) s)"
	last=$now
}

fail() {
	echo "deb-root: FAIL: $*" >&2
	exit 1
}

cleanup() {
	if [ -n "$boot_pid" ] && kill -0 "$boot_pid" 2>/dev/null; then
		kill "$boot_pid" 2>/dev/null || true
		wait "$boot_pid" 2>/dev/null || true
	fi
	if [ $keep -eq 0 ]; then
		rm -rf "$work"
	else
		echo "deb-root: kept $work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A command in a root that is not booted, as root or -u USER. Without
# machined (no systemd on the host) nspawn says at its exit that it left
# a directory under /run/systemd/nspawn alone: not repeated here.
run_in() {
	root=$1
	shift
	rc=0
	systemd-nspawn -q -D "$root" --register=no --keep-unit --as-pid2 \
	    --setenv=LC_ALL=C.UTF-8 --setenv=DEBIAN_FRONTEND=noninteractive \
	    "$@" 2>"$work/nspawn.err" || rc=$?
	grep -v '^Attempted to remove disk file system' "$work/nspawn.err" >&2 ||
		true
	return $rc
}

# 1. The base: minbase, systemd to boot, apt's lists.
if [ ! -f "$work/base/.done" ]; then
	rm -rf "$work/base"
	debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus \
	    bookworm "$work/base" "$mirror" >"$work/debootstrap.log" 2>&1 || {
		tail -20 "$work/debootstrap.log"
		fail "debootstrap"
	}
	echo "deb $mirror bookworm main" >"$work/base/etc/apt/sources.list"
	run_in "$work/base" apt-get update -qq >/dev/null ||
		fail "apt-get update"
	touch "$work/base/.done"
fi
rm -rf "$work/build" "$work/test"
lap "debootstrap"

# 2. The build, in a copy of the base: the tracked files, as the user
# builder, with what apt-get build-dep finds in debian/control alone.
# Sets deb.
build_deb() {
	cp -a "$work/base" "$work/build"
	mkdir -p "$work/build/build/src"
	git ls-files -z | xargs -0 sh -c 'for f; do [ -e "$f" ] &&
	    printf "%s\0" "$f"; done' sh | tar --null -T - -cf - |
	    tar -C "$work/build/build/src" -xf -
	run_in "$work/build" --chdir=/build/src apt-get build-dep -y -qq ./ \
	    >"$work/build-dep.log" 2>&1 || {
		tail -20 "$work/build-dep.log"
		fail "apt-get build-dep"
	}
	run_in "$work/build" useradd -m builder
	run_in "$work/build" chown -R builder: /build
	run_in "$work/build" -u builder --chdir=/build/src \
	    dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1 || {
		tail -40 "$work/build.log"
		fail "dpkg-buildpackage in the clean root (Build-Depends incomplete?)"
	}
	grep -E '^(Ok|Fail|Skipped): ' "$work/build.log" | tr -s ' ' |
	    paste -sd' ' | sed 's/^/deb-root: unit suites at build time: /'
	grep -Eq '^Fail: +0' "$work/build.log" ||
		fail "the unit suites did not run"
	! ls -d "$work"/build/build/src/obj-*/bench >/dev/null 2>&1 ||
		fail "bench/ was built"
	deb=$(ls "$work"/build/build/flaky_*.deb)
	echo "deb-root: built $(basename "$deb") in the clean root"
}

if [ -n "$given" ]; then
	deb=$given
	echo "deb-root: testing $deb (not built here)"
else
	build_deb
	lap "build (build-dep, dpkg-buildpackage, unit suites)"
fi
version=$(dpkg-deb -f "$deb" Version)

# The newer version: the same files, a higher version. dpkg runs the
# same maintainer scripts as for any upgrade (old prerm, new preinst,
# old postrm, new postinst configure OLD).
rm -rf "$work/repack"
dpkg-deb -R "$deb" "$work/repack"
sed -i "s/^Version: .*/Version: $version+upgrade1/" "$work/repack/DEBIAN/control"
newdeb=$work/flaky_$version+upgrade1.deb
dpkg-deb --root-owner-group -b "$work/repack" "$newdeb" >/dev/null

# 3. Boot a clean copy.
cp -a "$work/base" "$work/test"
mkdir -p "$work/test/root/debs" "$work/test/root/src"
cp "$deb" "$newdeb" "$work/test/root/debs/"
[ -z "$from" ] || cp "$from" "$work/test/root/debs/from.deb"
cp -a "$src/debian" "$work/test/root/src/"
echo "$name" >"$work/test/etc/hostname"
systemd-nspawn -q -D "$work/test" --boot --register=no --keep-unit \
    --machine="$name" >"$work/boot.log" 2>&1 &
boot_pid=$!
leader=""
for i in $(seq 100); do
	leader=$(pgrep -P "$boot_pid" | head -1 || true)
	[ -n "$leader" ] && break
	sleep 0.1
done
[ -n "$leader" ] || { cat "$work/boot.log"; fail "systemd-nspawn --boot"; }

# A command in the booted root, as root, in a clean environment.
inside() {
	nsenter -t "$leader" -a -- /usr/bin/env -i \
	    PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
	    DEBIAN_FRONTEND=noninteractive "$@"
}
# A login shell of USER there (a user's PATH: no /usr/sbin).
as() {
	u=$1
	shift
	inside su - "$u" -c "$*"
}
# Until COMMAND succeeds, at most 30 s.
wait_for() {
	what=$1
	shift
	for i in $(seq 300); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "$what: not within 30 s"
}
# The same for a shell command in the root.
until_in() {
	what=$1
	shift
	wait_for "$what" inside sh -c "$*"
}
ok() {
	echo "deb-root: ok: $*"
}

wait_for "systemd's manager socket" inside test -S /run/systemd/private
state=$(inside timeout 60 systemctl is-system-running --wait || true)
case $state in
running|degraded) ;;
*)	cat "$work/boot.log"; fail "systemd did not boot: $state" ;;
esac
[ "$(inside cat /proc/1/comm)" = systemd ] || fail "PID 1 is not systemd"
inside systemctl --failed --no-legend --plain | sed 's/^/deb-root: failed unit: /'
lap "boot (systemd $state)"


inside apt-get install -y -qq python3 >"$work/python3.log" 2>&1 || {
	cat "$work/python3.log"
	fail "apt-get install python3"
}
inside useradd -m -s /bin/sh alice
inside useradd -m -s /bin/sh bob
inside mkdir -p /srv/shop
inside sh -c 'cat >/srv/shop/test_shop.py <<EOF
import unittest


class Shop(unittest.TestCase):
    def test_pay(self):
        self.assertEqual(2 + 2, 4)

    def test_refund(self):
        pass
EOF'

# Install (autopkgtest's scripts first, on the freshly installed package).
first=/root/debs/$(basename "$deb")
[ -z "$from" ] || first=/root/debs/from.deb
inside apt-get install -y -qq "$first" >"$work/install.log" 2>&1 || {
	cat "$work/install.log"
	fail "apt-get install"
}
# The package under test, freshly installed (with --from, the old one
# is: only what it shares is checked before the upgrade).
fresh_checks() {
	for t in check-config analyze; do
		inside sh -c "cd /root/src && AUTOPKGTEST_TMP=\$(mktemp -d) \
		    debian/tests/$t" >"$work/autopkgtest-$t.log" 2>&1 || {
			cat "$work/autopkgtest-$t.log"
			fail "debian/tests/$t"
		}
		ok "debian/tests/$t"
	done
	inside getent passwd flaky >/dev/null || fail "no flaky user"
	[ "$(inside stat -c '%U:%G %a' /var/lib/flaky)" = "flaky:flaky 750" ] ||
		fail "/var/lib/flaky: $(inside stat -c '%U:%G %a' /var/lib/flaky)"
	inside test -d /etc/flaky || fail "no /etc/flaky"
	[ "$(inside systemctl is-enabled flakyd || true)" = disabled ] ||
		fail "flakyd enabled at install"
	[ "$(inside systemctl is-active flakyd || true)" = inactive ] ||
		fail "flakyd started at install"
	ok "installed $(inside dpkg-query -W -f '${Version}' flaky): flaky user," \
	    "/var/lib/flaky flaky:flaky 750, /etc/flaky, flakyd disabled and inactive"
}
if [ -z "$from" ]; then
	fresh_checks
else
	ok "installed $(inside dpkg-query -W -f '${Version}' flaky) (--from)"
	inside mkdir -p /etc/flaky
fi

# The README's steps (item 20): init as root, --check-config as a user.
inside flakyctl init --output /etc/flaky/flaky.yaml --schedule '0 3 * * *' \
    /srv/shop >/dev/null 2>&1 || fail "flakyctl init --output /etc/flaky/flaky.yaml"
as alice /usr/sbin/flakyd --check-config >/dev/null ||
	fail "/usr/sbin/flakyd --check-config as a user"
ok "flakyctl init into /etc/flaky; /usr/sbin/flakyd --check-config as a user"

# The daemon runs a trigger; a member of the group reads it.
inside usermod -aG flaky alice
inside systemctl enable --now flakyd >/dev/null 2>&1 || {
	inside journalctl -u flakyd --no-pager | tail -20
	fail "systemctl enable --now flakyd"
}
until_in "flakyd ready" 'flakyctl status'
target=$(inside sed -n 's/^  - name: "*\([^"]*\)"*$/\1/p' /etc/flaky/flaky.yaml)
runs=$(inside sed -n 's/^    runs: *\([0-9]*\).*/\1/p' /etc/flaky/flaky.yaml)
as alice "flakyctl run $target" >/dev/null || fail "flakyctl run as alice"
# The runs of the daemon's database (as alice: the system config), done
# and all.
sysdb_runs() {
	as alice "flakyctl --format json report --since 1d" | python3 -c '
import json, sys
r = json.load(sys.stdin)["runs"]
print(r["done"], r["total"])'
}
trigger_done() {
	[ "$(sysdb_runs)" = "$runs $runs" ]
}
wait_for "the trigger's $runs runs stored" trigger_done
ok "flakyd enabled and running; a trigger's $runs runs stored; alice (group flaky) reads them"

# Upgrade while flakyd runs: it keeps running, restarted on the new files.
pid1=$(inside systemctl show -p MainPID --value flakyd)
inside apt-get install -y -qq "/root/debs/$(basename "$newdeb")" \
    >"$work/upgrade.log" 2>&1 || { cat "$work/upgrade.log"; fail "upgrade"; }
[ "$(inside dpkg-query -W -f '${Version}' flaky)" = "$version+upgrade1" ] ||
	fail "not upgraded"
until_in "flakyd active after the upgrade" 'systemctl is-active flakyd'
pid2=$(inside systemctl show -p MainPID --value flakyd)
[ "$pid2" != 0 ] && [ "$pid2" != "$pid1" ] ||
	fail "flakyd not restarted by the upgrade (pid $pid1, then $pid2)"
until_in "flakyd answers after the upgrade" 'flakyctl status'
ok "upgraded to $version+upgrade1 while running: flakyd active, pid $pid1 -> $pid2"

# init's hint names flakyd where a user can run it (item 20).
as alice "flakyctl init --output /tmp/alice.yaml /srv/shop" \
    >"$work/init-alice.log" 2>&1 || { cat "$work/init-alice.log"; fail "init as alice"; }
grep -q 'check it with /usr/sbin/flakyd --check-config' "$work/init-alice.log" ||
	fail "init's hint does not name /usr/sbin/flakyd: $(cat "$work/init-alice.log")"
ok "init's hint: /usr/sbin/flakyd --check-config"

# Ad-hoc runs on the box (item 21): ./flaky.db, not the daemon's.
before=$(sysdb_runs)
inside sh -c 'mkdir -p /root/adhoc && cd /root/adhoc &&
    flakyctl analyze --runs 2 /srv/shop' >/dev/null 2>&1 ||
	fail "flakyctl analyze as root"
inside test -f /root/adhoc/flaky.db || fail "analyze as root wrote no ./flaky.db"
[ "$(sysdb_runs)" = "$before" ] || fail "analyze as root wrote into the daemon's database"
as bob "cd && flakyctl analyze --runs 1 /srv/shop" >/dev/null 2>&1 ||
	fail "flakyctl analyze as a user outside the group"
ok "ad-hoc analyze as root and as a user: ./flaky.db; the daemon's database unchanged (done, total: $before)"

# Stopped (as during an upgrade from an older package): the group reads.
inside systemctl stop flakyd
as alice "flakyctl report --since 1d" >"$work/report-stopped.log" 2>&1 || {
	cat "$work/report-stopped.log"
	fail "alice cannot read the database while flakyd is stopped"
}
inside systemctl start flakyd
until_in "flakyd ready again" 'flakyctl status'
ok "alice (group flaky) reads the database with flakyd stopped"

# Remove: flakyd stops; the evidence and the config stay.
inside apt-get remove -y -qq flaky >"$work/remove.log" 2>&1 || {
	cat "$work/remove.log"
	fail "apt-get remove"
}
[ "$(inside systemctl is-active flakyd || true)" != active ] ||
	fail "flakyd still active after remove"
inside sh -c 'for p in /proc/[0-9]*; do
    [ "$(cat $p/comm 2>/dev/null)" != flakyd ] || exit 1; done' ||
	fail "a flakyd process is left after remove"
inside test -f /var/lib/flaky/flaky.db || fail "remove deleted the database"
inside test -f /etc/flaky/flaky.yaml || fail "remove deleted the config"
ok "removed: flakyd stopped, no process left; /var/lib/flaky and /etc/flaky/flaky.yaml stay"

# Purge: the evidence and /run/flaky go; the user, group and the
# administrator's config stay (README.md, "Install").
inside apt-get purge -y -qq flaky >"$work/purge.log" 2>&1 || {
	cat "$work/purge.log"
	fail "apt-get purge"
}
! inside test -e /var/lib/flaky || fail "purge left /var/lib/flaky"
! inside test -e /run/flaky || fail "purge left /run/flaky"
inside getent passwd flaky >/dev/null || fail "purge removed the flaky user"
inside test -f /etc/flaky/flaky.yaml || fail "purge removed /etc/flaky/flaky.yaml"
[ "$(inside dpkg-query -W -f '${Status}' flaky 2>/dev/null || true)" != "install ok installed" ] ||
	fail "still installed"
ok "purged: /var/lib/flaky and /run/flaky gone; the flaky user and group and /etc/flaky/flaky.yaml remain"
lap "lifecycle in the booted root"
echo "deb-root: all ok ($(( $(date +%s) - t0 )) s)"
