"""Loaded first by every pytest suite under tests/ (integration,
reliability): the programs under test never see the machine's flaky set-up.

flakyctl's commands that only read fall back to the system's config,
/etc/flaky/flaky.yaml (the installed daemon's, with its database); here
FLAKYCTL_SYSTEM_CONFIG names a path that cannot exist, so that no test
reads it (tests/integration/cli/test_system_config.py gives its own). The
caller's FLAKY_DB, FLAKY_CONFIG, FLAKY_SOCKET and FLAKY_BOX are dropped:
a test that wants one sets it. flaky reads no configuration from $HOME."""
import os

# /dev/null is no directory: nothing can ever be made at this path
os.environ["FLAKYCTL_SYSTEM_CONFIG"] = "/dev/null/flaky.yaml"
for _k in ("FLAKY_DB", "FLAKY_CONFIG", "FLAKY_SOCKET", "FLAKY_BOX"):
    os.environ.pop(_k, None)
