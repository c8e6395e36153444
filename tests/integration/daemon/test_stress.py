"""Issue 18: a target's stress: in flakyd. Its runs record the
perturbation, and a calm target's runs beside it do not."""
from conftest import UNITTEST_OK, query, unittest_target, wait_for


def test_target_stress_is_recorded(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" +
                        unittest_target("hot", "every 1s",
                                        extra="    stress: cpu:2\n") +
                        unittest_target("calm", "every 1s"))
    daemon.start()
    wait_for("2 finished runs of each target", lambda: all(
        len(daemon.runs("r.status = 'done' AND t.name = ?", (n,))) >= 2
        for n in ("hot", "calm")))
    assert daemon.stop() == 0
    got = set(query(daemon.db, "SELECT t.name, r.perturbation FROM runs r "
                    "JOIN targets t ON t.id = r.target_id "
                    "WHERE r.status = 'done'"))
    assert got == {("hot", "cpu:2"), ("calm", None)}, got
