"""flakyctl init on each JavaScript demo: the isolate: template it writes
(what flakyctl confirm and flakyd's confirm: true run) selects exactly the
one test of an id, with a title whose characters a pattern must escape."""
import os
import re
import subprocess

import pytest
import yaml

from conftest import ctl

SEP = " \u203a "
CASES = {
    "demo-vitest": ("vitest",
                    "test/search.test.js > search > matches (a+b) * c literally",
                    r"^ ([✓×↓]) (.*?)(?: \d+ms)?$"),
    "demo-mocha": ("mocha", "search matches (a+b) * c literally",
                   r"^\s+(✔|\d+\)) (.*)$"),
    "demo-nodetest": (None, "search > matches (a+b) * c literally",
                      r"^\s*(✔|✖) (.*) \([\d.]+ms\)$"),
    "demo-playwright": ("playwright", SEP.join([
        "tests/search.spec.js:9", "[chromium]",
        "matches (a+b) * c literally"]),
        r"^  ([✓✘]) +\d+ (.*?) \(\d.*\)$"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_isolate(demo, tmp_path, name):
    needs, test_id, line = CASES[name]
    d, e = demo(name, needs)
    out = tmp_path / "flaky.yaml"
    ctl(["init", "--output", str(out), d], env=e)
    t = yaml.safe_load(open(out))["targets"][0]
    cmd = t["isolate"].replace("{test}", '"$FLAKY_TEST"')
    if name == "demo-nodetest":
        # node's options go before its files: spec, to see what ran
        cmd = cmd.replace("'node' ", "'node' --test-reporter=spec ", 1)
    p = subprocess.run(["/bin/sh", "-c", cmd], cwd=t["dir"],
                       env=dict(e, FLAKY_TEST=test_id), capture_output=True,
                       text=True, timeout=300)
    ran = [m.group(2) for m in re.finditer(line, p.stdout + p.stderr, re.M)
           if m.group(1) not in ("↓",)]
    # the one test; node's spec reporter also ends its suites
    assert ran and all("matches (a+b) * c literally" in r or
                       r in ("search", "cart", "checkout")
                       for r in ran), (cmd, p.stdout, p.stderr)
    assert sum("matches" in r for r in ran) == 1, (cmd, p.stdout)
