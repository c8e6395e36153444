#!/usr/bin/python3
"""docs/screenshots/: every page of the dashboard at 1400 and 400 px (the
overview and a test's page also dark), from the team history of the
browser test (tests/integration/web/history.py) on SQLite, in Debian's
headless Chromium (tests/integration/web/browse.js). Each shot is the
page's top 1,800 pixels at most.

    scripts/screenshots.py [BUILD_DIR]     (default: build)
"""
import json
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = ROOT / (sys.argv[1] if len(sys.argv) > 1 else "build")
os.environ["FLAKYCTL"] = str(BUILD / "cli" / "flakyctl")
os.environ["FLAKYD"] = str(BUILD / "daemon" / "flakyd")
sys.path.insert(0, str(ROOT / "tests" / "integration" / "web"))
import conftest  # noqa: E402
import history  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
DARK = ("overview", "test")


def main():
    with tempfile.TemporaryDirectory() as d:
        work = pathlib.Path(d)
        db = str(work / "flaky.db")
        history.make(conftest.FLAKYCTL, db, work, days=45)
        history.checkout(conftest.FLAKYCTL, db, work, str(ROOT))
        history.marks(conftest.FLAKYCTL, db)
        s = conftest.Server(db)
        try:
            def first(path, key):
                body = conftest.get(s.url + path)[2]
                return json.loads(body)[key][0]["id"]
            pages = {
                "overview": "/",
                "overview-filtered": "/?days=90&target=shop&branch=main",
                "tests": "/tests",
                "tests-search": "/tests?state=flaky&q=checkout",
                "test": "/test/%d" % first(
                    "/api/v1/tests?q=test_checkout_retry", "tests"),
                "test-quarantined": "/test/%d" % first(
                    "/api/v1/tests?q=test_legacy_api&target=shop", "tests"),
                "run": "/run/%d" % first("/api/v1/runs?limit=1", "runs"),
            }
            report = conftest.browse({
                "base": s.url, "pages": list(pages.values()), "dark": True,
                "shots": str(work / "shots"), "shotHeight": 1800}, work)
        finally:
            s.stop()
        names = {v: k for k, v in pages.items()}
        OUT.mkdir(exist_ok=True)
        for old in OUT.glob("*.png"):
            old.unlink()
        for r in report:
            dark = r["path"].endswith("#dark")
            name = names[r["path"][:-5] if dark else r["path"]]
            if dark and name not in DARK:
                continue
            dst = OUT / ("%s-%d%s.png" % (name, r["width"],
                                          "-dark" if dark else ""))
            shutil.copy(r["shot"], dst)
            print(dst.relative_to(ROOT))

if __name__ == "__main__":
    main()
