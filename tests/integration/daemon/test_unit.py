"""The systemd unit as meson configures it (beside the flakyd binary):
systemd's own checks offline, an exposure of at most 3.0, and the settings
docs/daemon.md explains kept as decided, and flakyd with its runners
(unittest, pytest, Jest, go test) working under the unit's system call
filter. systemd need not be running."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import FLAKYD, wait_for

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(
    ANALYZE is None, reason="systemd-analyze not installed (Debian: systemd)")
EXPOSURE_MAX = 3.0


def unit_path():
    path = os.path.join(os.path.dirname(os.path.abspath(FLAKYD)),
                        "flakyd.service")
    assert os.path.exists(path), "no configured unit beside %s" % FLAKYD
    return path


def unit_settings():
    """[Service] as key -> list of values, in order."""
    settings, section = {}, None
    with open(unit_path()) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]":
                k, v = line.split("=", 1)
                settings.setdefault(k, []).append(v)
    return settings


def unit_copy(tmp_path):
    """The unit with ExecStart= on the built flakyd (systemd checks that it
    is executable), under its own name (security reads the name)."""
    d = tmp_path / "unit"
    d.mkdir()
    with open(unit_path()) as f:
        text = re.sub(r"(?m)^ExecStart=\S+", "ExecStart=%s" %
                      os.path.abspath(FLAKYD), f.read())
    (d / "flakyd.service").write_text(text)
    return str(d / "flakyd.service")


@needs_analyze
def test_exposure_is_at_most_three(tmp_path):
    p = subprocess.run([ANALYZE, "security", "--offline=true",
                        "--no-pager", unit_copy(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for flakyd\.service: "
                  r"(\d+\.\d+)", p.stdout)
    assert m, (p.returncode, p.stdout, p.stderr)
    assert float(m.group(1)) <= EXPOSURE_MAX, p.stdout


@needs_analyze
def test_systemd_accepts_every_line(tmp_path):
    # A misspelt value is only a warning ("ignoring"): any output fails.
    p = subprocess.run([ANALYZE, "verify", "--man=no", unit_copy(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", \
        (p.returncode, p.stdout, p.stderr)


def test_settings_docs_depend_on():
    s = unit_settings()
    # flakyd stops its runs on SIGTERM; at the end (or when flakyd died)
    # SIGKILL goes to the whole cgroup.
    assert s["KillMode"] == ["mixed"]
    assert s.get("SendSIGKILL", ["yes"]) == ["yes"]
    # A syscall outside the filter fails; it does not kill the test.
    assert s["SystemCallErrorNumber"] == ["EPERM"]
    # node's JIT needs writable executable memory.
    assert "MemoryDenyWriteExecute" not in s
    # flakyd reads /proc/sys/kernel/random/boot_id and /proc/loadavg.
    assert "ProcSubset" not in s
    # The database is group-readable for the flaky group's flakyctl.
    assert s["UMask"] == ["0027"]


# A seccomp allow list as the unit's SystemCallFilter= and
# SystemCallErrorNumber=EPERM make it, put in front of flakyd: everything
# it starts inherits it, as under systemd.
FILTER_C = r"""
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

static const int nrs[] = {
%s
};

int
main(int argc, char **argv)
{
	static struct sock_filter f[2 * sizeof nrs / sizeof nrs[0] + 2];
	struct sock_fprog prog;
	size_t n = 0;

	(void)argc;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	    offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < sizeof nrs / sizeof nrs[0]; i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		    nrs[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		    SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	    SECCOMP_RET_ERRNO | EPERM);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1) {
		perror("seccomp");
		return 126;
	}
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
"""

FILTERED_UNITTEST = """import unittest
class T(unittest.TestCase):
    def test_under_the_filter(self):
        with open("/proc/self/status") as f:
            self.assertIn("Seccomp:\\t2", f.read())
    def test_two(self):
        self.assertEqual(2, 2)
"""

FILTERED_PYTEST = """import subprocess, threading
def test_threads_and_a_child():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    assert subprocess.run(["true"]).returncode == 0
def test_plain():
    assert 1 + 1 == 2
"""

GO_TEST = """package g

import (
\t"net"
\t"testing"
)

func TestListen(t *testing.T) {
\tl, err := net.Listen("tcp", "127.0.0.1:0")
\tif err != nil {
\t\tt.Fatal(err)
\t}
\tl.Close()
}

func TestParallel(t *testing.T) { t.Parallel() }
"""


def filter_syscalls(group, seen=None):
    """A systemd syscall group, expanded the way systemd does."""
    seen = set() if seen is None else seen
    out = subprocess.run([ANALYZE, "syscall-filter", group],
                         capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines()[1:]:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            if line not in seen:
                seen.add(line)
                names |= filter_syscalls(line, seen)
        else:
            names.add(line)
    return names


@needs_analyze
def test_runners_pass_under_the_units_syscall_filter(daemon, tmp_path,
                                                     monkeypatch):
    import conftest
    s = unit_settings()
    assert s["SystemCallFilter"] == ["@system-service"]
    names = sorted(filter_syscalls("@system-service"))
    src = tmp_path / "filter.c"
    src.write_text(FILTER_C % "\n".join(
        "#ifdef __NR_%s\n\t__NR_%s,\n#endif" % (n, n) for n in names))
    exe = str(tmp_path / "filter")
    subprocess.run(["cc", "-O", "-o", exe, str(src)], check=True)
    # LeakSanitizer (the ASan build) stops the world with ptrace, which
    # the filter refuses as systemd would: no leak check behind it.
    wrapper = tmp_path / "flakyd-filtered"
    wrapper.write_text("#!/bin/sh\n"
                       "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}"
                       "detect_leaks=0 exec %s %s \"$@\"\n" %
                       (exe, os.path.abspath(FLAKYD)))
    wrapper.chmod(0o755)
    monkeypatch.setattr(conftest, "FLAKYD", str(wrapper))

    daemon.write("test_filtered.py", FILTERED_UNITTEST)
    daemon.write("test_py.py", FILTERED_PYTEST)
    body = ("targets:\n" + conftest.unittest_target(
        "unittest", None, "test_filtered") +
        "  - name: pytest\n    command: [%s, -m, pytest, -p, "
        "no:cacheprovider, -p, no:random_order, test_py.py]\n" %
        conftest.PYTHON)
    # target -> tests it reports at least
    want = {"unittest": 2, "pytest": 2}
    jest_dir = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                            "examples", "demo-jest")
    if os.path.exists(os.path.join(jest_dir, "node_modules", ".bin",
                                   "jest")):
        body += ("  - name: jest\n    command: [node_modules/.bin/jest, "
                 "--ci]\n    dir: %s\n" % os.path.abspath(jest_dir))
        want["jest"] = 8
    if shutil.which("go"):
        gomod = os.path.join(daemon.dir, "gomod")
        os.mkdir(gomod)
        with open(os.path.join(gomod, "go.mod"), "w") as f:
            f.write("module example.com/g\n\ngo 1.19\n")
        with open(os.path.join(gomod, "g_test.go"), "w") as f:
            f.write(GO_TEST)
        body += ("  - name: go\n    command: [go, test, -count=1, ./...]\n"
                 "    dir: %s\n    timeout: 5m\n" % gomod)
        want["go"] = 2
    daemon.write_config(body)
    daemon.start()
    for name in want:
        daemon.ctl("run", name, check=0)
    rows = wait_for("every run stored", lambda: (
        lambda r: r if len(r) == len(want) else None)(
        daemon.runs("r.status != 'running'")), timeout=120, step=0.2)
    got = {r[1]: (r[2], r[4], r[5], r[6]) for r in rows}
    for name, tests in want.items():
        status, n, failures, error = got[name]
        assert status == "done" and error is None and n >= tests, \
            (name, got[name], daemon.logtext())
        # The demo Jest suite fails on purpose; the others must not.
        assert name == "jest" or failures == 0, (name, got[name])
    assert got["unittest"] == ("done", 2, 0, None)
    assert daemon.stop() == 0
