"""The systemd unit as meson configures it (beside the flakyd binary):
systemd's own checks offline, an exposure of at most 3.0, and the settings
docs/daemon.md explains kept as decided. systemd need not be running."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import FLAKYD

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
