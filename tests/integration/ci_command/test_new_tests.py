"""--new-tests from git: a test the default branch knows is new again when
its file changed since the merge base with it (pytest's file, a go test
file's functions); the tests of unchanged files are not rerun. With no run
of the target on the default branch yet, only changed files count."""
import json
import subprocess


def git(d, *args):
    subprocess.run(["git", "-C", str(d)] + list(args), check=True,
                   capture_output=True, env={
                       "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
                       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
                       "HOME": str(d), "PATH": "/usr/bin:/bin"})


def new_ones(p):
    assert p.stdout, p
    return sorted(t["test"] for t in json.loads(p.stdout)["tests"]
                  if t["new"])


def test_changed_files(shop):
    for runner, changed, new in (
            ("pytest", "test_coupons.py", "test_coupons.py::"
             "test_coupon_stacking"),
            ("go", "coupons/coupons_test.go",
             "example.com/democi/coupons/TestCouponStacking")):
        s = shop(runner)
        git(s.dir, "init", "-q", "-b", "main")
        git(s.dir, "add", "-A")
        git(s.dir, "commit", "-qm", "the shop")
        db = s.seed_db + ".git.db"
        # the default branch ran the whole suite: every test is known
        s.ctl(["--db", db, "ci", "--target", s.target, "--retries", "0",
               "--"] + s.spec["full"], "git-main", 1, check=1)
        git(s.dir, "checkout", "-q", "-b", "coupons")
        with open("%s/%s" % (s.dir, changed), "a") as f:
            f.write("\n// a change\n" if runner == "go" else "\n# a change\n")
        git(s.dir, "commit", "-qam", "coupons changed")
        args = ["--db", db, "--format", "json", "ci", "--target", s.target,
                "--new-tests", "2", "--retries", "0", "--"] + s.spec["full"]
        p = s.ctl(args, "git-branch", 1)
        assert new_ones(p) == [new], (runner, p.stdout, p.stderr)
        assert p.stderr.count("--new-tests") == 0, p.stderr
        if runner != "pytest":
            continue
        # a database with no run on main: the changed file alone
        p = s.ctl(["--db", db + "2"] + args[2:], "git-branch2", 1)
        assert new_ones(p) == [new], (runner, p.stdout, p.stderr)
        assert "no run of %s on main to compare with yet" % s.target in \
            p.stderr
