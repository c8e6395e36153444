"""A git repository of 32 commits in which commit 19 makes a test flaky.

tests/test_demo.py holds test_stable and test_flaky. From commit 19 on,
test_flaky fails one run in five: it counts its runs in the file that
$BISECT_DEMO_COUNTER names (outside the repository, so every revision's
worktree shares it) and fails when the count is a multiple of 5. The
pattern is fixed, so the demo is not flaky itself: its rate is 0.2 exactly
over any five runs in a row.

    python3 make_repo.py DIR        # prints the 32 hashes, oldest first
"""
import os
import subprocess
import sys

COMMITS = 32
FLAKY_FROM = 19      # 1-based: the commit that makes the test flaky

CLEAN = '''import os


def test_stable():
    assert 1 + 1 == 2


def test_flaky():
    bump()


def bump():
    path = os.environ.get("BISECT_DEMO_COUNTER")
    if not path:
        return 0
    try:
        with open(path) as f:
            n = int(f.read() or "0")
    except FileNotFoundError:
        n = 0
    n += 1
    with open(path, "w") as f:
        f.write(str(n))
    return n
'''

FLAKY = CLEAN.replace('''def test_flaky():
    bump()
''', '''def test_flaky():
    # the cache "optimisation" of commit 19: fails one run in five
    assert bump() % 5 != 0, "stale cache entry"
''')


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="demo", GIT_AUTHOR_EMAIL="d@x",
               GIT_COMMITTER_NAME="demo", GIT_COMMITTER_EMAIL="d@x",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    return subprocess.run(["git", "-C", repo] + list(args), env=env,
                          check=True, capture_output=True,
                          text=True).stdout.strip()


def make(repo):
    """Make the repository; returns the hashes, oldest first."""
    os.makedirs(os.path.join(repo, "tests"), exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    hashes = []
    for i in range(1, COMMITS + 1):
        with open(os.path.join(repo, "tests", "test_demo.py"), "w") as f:
            f.write(FLAKY if i >= FLAKY_FROM else CLEAN)
        with open(os.path.join(repo, "NOTES"), "a") as f:
            f.write("commit %d\n" % i)
        with open(os.path.join(repo, ".gitignore"), "w") as f:
            f.write("__pycache__/\n.pytest_cache/\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "commit %d" % i)
        hashes.append(git(repo, "rev-parse", "HEAD"))
    return hashes


if __name__ == "__main__":
    for h in make(sys.argv[1]):
        print(h)
