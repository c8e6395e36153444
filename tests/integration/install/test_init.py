"""flakyctl init writes a flaky.yaml that flakyd --check-config accepts,
for each runner directory mode finds; it never replaces a file unless
told; flakyd without a config says how to make one."""
import os
import shutil
import subprocess

import pytest
import yaml

from conftest import EXAMPLES, FLAKYCTL, ctl, flakyd


def check(path):
    """flakyd --check-config on path: passes, one target, nightly."""
    p = flakyd(["--check-config", "--config", str(path)])
    assert p.returncode == 0, (p.stderr, open(path).read())
    assert "ok, 1 target" in p.stdout
    assert "0 3 * * *" in p.stdout
    return yaml.safe_load(open(path))


def isolate_run(target, test_id):
    """The target's isolate: template as confirm runs it: {test} outside
    quotes is "$FLAKY_TEST", the id in the environment."""
    cmd = target["isolate"].replace("{test}", '"$FLAKY_TEST"')
    env = dict(os.environ, FLAKY_TEST=test_id)
    return subprocess.run(["/bin/sh", "-c", cmd], cwd=target["dir"],
                          env=env, capture_output=True, text=True,
                          timeout=120)


def test_pytest_demo(demo, tmp_path):
    d = demo("demo-pytest")
    out = tmp_path / "etc.yaml"
    p = ctl(["init", "--output", str(out), str(d)])
    assert p.returncode == 0, p.stderr
    assert "wrote %s" % out in p.stderr
    cfg = check(out)
    assert cfg["database"] == "/var/lib/flaky/flaky.db"
    t = cfg["targets"][0]
    assert t["name"] == "demo-pytest-pytest"
    assert t["command"][1:] == ["-v"]
    assert t["dir"] == str(d)
    assert t["schedule"] == "0 3 * * *"
    # the template runs just that test
    # an id with a space stays one word
    r = isolate_run(t, "test_shop.py::test_names[with space]")
    assert "test_shop.py::test_names[with space] PASSED" in r.stdout, \
        r.stdout
    assert "1 passed" in r.stdout


def test_unittest_demo(demo, tmp_path):
    """Without pytest in PATH a Python suite is unittest's."""
    d = demo("demo-unittest")
    out = tmp_path / "f.yaml"
    bindir = tmp_path / "bin"  # python3 and nothing else (/bin is /usr/bin)
    bindir.mkdir()
    os.symlink(shutil.which("python3"), bindir / "python3")
    env = dict(os.environ, PATH=str(bindir))
    p = ctl(["init", "-o", str(out), str(d)], env=env)
    assert p.returncode == 0, p.stderr
    t = check(out)["targets"][0]
    assert t["command"][1:4] == ["-m", "unittest", "discover"]
    assert "-m unittest -v {test}" in t["isolate"]
    r = isolate_run(t, "test_inventory.InventoryTest.test_count")
    assert r.returncode == 0, r.stderr
    assert "test_count (test_inventory.InventoryTest" in r.stderr
    assert "Ran 1 test" in r.stderr, r.stderr


def test_jest_demo(demo, tmp_path):
    if not os.path.exists(os.path.join(EXAMPLES, "demo-jest", "node_modules",
                                       ".bin", "jest")):
        pytest.skip("Jest is not installed (scripts/deps.sh)")
    d = demo("demo-jest")
    out = tmp_path / "f.yaml"
    p = ctl(["init", "-o", str(out), str(d)])
    assert p.returncode == 0, p.stderr
    t = check(out)["targets"][0]
    assert t["command"] == ["node_modules/.bin/jest", "--verbose"]
    # titles full of regex metacharacters: escaped and anchored, the
    # template runs the one test and not its near namesakes
    (d / "__tests__" / "meta.test.js").write_text(
        "describe('price (EUR)', () => {\n"
        "  test('1.5 * 2 = 3?', () => { expect(1.5 * 2).toBe(3); });\n"
        "  test('1.5 * 2 = 3? twice', () => { expect(1).toBe(1); });\n"
        "  test('1x5 * 2 = 3?', () => { expect(1).toBe(1); });\n"
        "});\n")
    r = isolate_run(t, "__tests__/meta.test.js › price (EUR) › 1.5 * 2 = 3?")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "\u2713 1.5 * 2 = 3?" in out, out
    assert "Tests:       2 skipped, 1 passed, 3 total" in out, out


def test_go_module(tmp_path):
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    mod = tmp_path / "gomod"
    (mod / "calc").mkdir(parents=True)
    (mod / "go.mod").write_text("module example.com/gomod\n\ngo 1.19\n")
    (mod / "calc" / "calc_test.go").write_text(
        "package calc\n\nimport \"testing\"\n\n"
        "func TestAdd(t *testing.T) {\n"
        "\tt.Run(\"small\", func(t *testing.T) {})\n"
        "\tt.Run(\"big\", func(t *testing.T) {})\n}\n"
        "func TestAddMore(t *testing.T) {}\n")
    out = tmp_path / "f.yaml"
    p = ctl(["init", "-o", str(out), str(mod)])
    assert p.returncode == 0, p.stderr
    t = check(out)["targets"][0]
    assert t["command"][:4] == ["go", "test", "-v", "-count=1"]
    env = dict(os.environ, GOFLAGS="-mod=mod",
               GOCACHE=str(tmp_path / "gocache"))
    cmd = t["isolate"].replace("{test}", '"$FLAKY_TEST"')
    r = subprocess.run(["/bin/sh", "-c", cmd], cwd=t["dir"], env=dict(
        env, FLAKY_TEST="example.com/gomod/calc/TestAdd/small"),
        capture_output=True, text=True, timeout=300)
    assert "--- PASS: TestAdd/small" in r.stdout, (r.stdout, r.stderr)
    assert "TestAdd/big" not in r.stdout
    assert "TestAddMore" not in r.stdout


def test_in_the_project(demo):
    """The default output is DIR/flaky.yaml, with paths relative to it:
    the file can be committed with the project."""
    d = demo("demo-pytest")
    p = ctl(["init", str(d)])
    assert p.returncode == 0, p.stderr
    cfg = check(d / "flaky.yaml")
    assert cfg["database"] == "flaky.db"
    assert cfg["socket"] == "flakyd.sock"
    assert cfg["targets"][0]["dir"] == "."


def test_refuses_to_overwrite(demo):
    d = demo("demo-pytest")
    f = d / "flaky.yaml"
    f.write_text("# mine\n")
    p = ctl(["init", str(d)])
    assert p.returncode == 2
    assert p.stderr == ("flakyctl init: %s exists; expected a new file "
                        "(--force replaces it)\n" % f)
    assert f.read_text() == "# mine\n"
    assert sorted(os.listdir(d)) == ["flaky.yaml", "test_shop.py"]
    p = ctl(["init", "--force", "--target", "shop", str(d)])
    assert p.returncode == 0, p.stderr
    assert check(f)["targets"][0]["name"] == "shop"
    assert sorted(os.listdir(d)) == ["flaky.yaml", "test_shop.py"]


def test_stdout_and_options(demo):
    d = demo("demo-pytest")
    p = ctl(["--db", "/srv/evidence.db", "init", "-o", "-", "--schedule",
             "@weekly", str(d)])
    assert p.returncode == 0, p.stderr
    cfg = yaml.safe_load(p.stdout)
    assert cfg["database"] == "/srv/evidence.db"
    assert cfg["targets"][0]["schedule"] == "@weekly"
    assert not (d / "flaky.yaml").exists()


@pytest.mark.parametrize("args,message", [
    (["--schedule", "61 * * * *"],
     "flakyctl init: --schedule: minute field: expected 0-59, got 61\n"),
    (["a", "b"], "flakyctl init: expected one directory, got also 'b'\n"),
])
def test_bad_input(tmp_path, args, message):
    p = ctl(["init"] + args, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith(message), p.stderr
    assert os.listdir(tmp_path) == []


def test_no_runner(tmp_path):
    p = ctl(["init", str(tmp_path)])
    assert p.returncode == 2
    assert "no test runner recognized; looked for" in p.stderr
    assert p.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_flakyd_without_config(tmp_path):
    missing = tmp_path / "flaky.yaml"
    for args, code in (["--check-config"], 1), (["--foreground"], 2):
        p = flakyd(["--config", str(missing)] + args, timeout=10)
        assert p.returncode == code
        assert p.stderr == (
            "flakyd: %s: no such file; write one with: flakyctl init "
            "--output %s PROJECT_DIR\n" % (missing, missing))


def test_installed_example(tmp_path):
    """contrib/flaky.yaml.example (share/doc/flaky/examples/flaky.yaml)
    passes --check-config as it is."""
    from conftest import SOURCE
    f = tmp_path / "flaky.yaml"
    shutil.copy(os.path.join(SOURCE, "contrib", "flaky.yaml.example"), f)
    if shutil.which("pytest") is None:
        pytest.skip("pytest is not in PATH")
    p = flakyd(["--check-config", "--config", str(f)])
    assert p.returncode == 0, p.stderr


def test_write_error(demo):
    """A failed write is an error, not a half file taken for a whole."""
    d = demo("demo-pytest")
    with open("/dev/full", "w") as full:
        p = subprocess.run([FLAKYCTL, "init", "-o", "-",
                            str(d)], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=30)
    assert p.returncode == 2
    assert p.stderr == "flakyctl init: stdout: No space left on device\n"


def test_unittest_start_directory(tmp_path):
    """discover -s START without -t imports from START: the template
    changes to it first, quoted whatever its name."""
    proj = tmp_path / "proj"
    sub = proj / "it's here"
    sub.mkdir(parents=True)
    (sub / "test_x.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n"
        "    def test_a(self):\n        pass\n"
        "    def test_b(self):\n        pass\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(shutil.which("python3"), bindir / "python3")
    out = tmp_path / "f.yaml"
    p = ctl(["init", "-o", str(out), str(proj)],
            env=dict(os.environ, PATH=str(bindir)))
    assert p.returncode == 0, p.stderr
    t = check(out)["targets"][0]
    assert t["command"][-2:] == ["-s", "it's here"]
    r = isolate_run(t, "test_x.T.test_a")
    assert r.returncode == 0, r.stderr
    assert "Ran 1 test" in r.stderr, r.stderr
