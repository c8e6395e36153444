/* The SQL of a run's writes (write.c), each statement prepared once per
 * store, and the statements a run ingested whole adds its budget and
 * failure rollups with (ingest.c). */
#include "buildconf.h"

#include <stdint.h>
#include <stdlib.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* Every run's failed results add to the rerun budget of their test and
 * day (schema/0015-budget15.sql): the runs it cost, wall and CPU time. Of
 * every kind, as the budget has always counted. A run ingested whole
 * adds its share with this statement, one for the run (ingest.c); a run
 * stored by run_finish adds each failure as it is written (add_failure). */
const char store_sql_budget_run[] =
    "INSERT INTO budget (day, test_id, runs, wall_us, cpu_us) "
    "SELECT ru.started_ms / 86400000, r.test_id, count(*), "
    "count(*) * coalesce(ru.duration_us, 0), "
    "count(*) * (coalesce(ru.user_us, 0) + coalesce(ru.sys_us, 0)) "
    "FROM runs ru JOIN results r ON r.run_id = ru.id "
    "WHERE ru.id = ?1 AND r.outcome IN (1, 2) GROUP BY r.test_id "
    "ON CONFLICT (day, test_id) DO UPDATE SET "
    "runs = runs + excluded.runs, wall_us = wall_us + excluded.wall_us, "
    "cpu_us = cpu_us + excluded.cpu_us";

/* And its failures per day, test, message and signature, for the most
 * common failure of a test and its signature counts
 * (schema/0016-failrollups15.sql). */
const char store_sql_failure_rollups_run[] =
    "INSERT INTO failure_rollups (day, test_id, counted, message_id, "
    "signature, failures, last_run_id) "
    "SELECT ru.started_ms / 86400000, r.test_id, "
    "ru.kind <> 'alone' AND ru.incomplete IS NULL, "
    "coalesce(r.message_id, 0), coalesce(r.signature, 'UNKNOWN'), "
    "count(*), ru.id "
    "FROM runs ru JOIN results r ON r.run_id = ru.id "
    "WHERE ru.id = ?1 AND r.outcome IN (1, 2) "
    "GROUP BY r.test_id, 4, 5 "
    "ON CONFLICT (day, test_id, counted, message_id, signature) "
    "DO UPDATE SET failures = failures + excluded.failures, "
    "last_run_id = max(last_run_id, excluded.last_run_id)";

const char *const store_write_sql[ST_COUNT] = {
	/* The same one failed result at a time, from what run_finish has
	 * in hand: reading the run's results back twice cost 6.8% more
	 * instructions per stored run with 2% of them failed. */
	[ST_BUDGET] =
	    "INSERT INTO budget (day, test_id, runs, wall_us, cpu_us) "
	    "VALUES (?1, ?2, 1, ?3, ?4) ON CONFLICT (day, test_id) "
	    "DO UPDATE SET runs = runs + 1, "
	    "wall_us = wall_us + excluded.wall_us, "
	    "cpu_us = cpu_us + excluded.cpu_us",
	[ST_FAILURE_ROLLUP] =
	    "INSERT INTO failure_rollups (day, test_id, counted, message_id, "
	    "signature, failures, last_run_id) "
	    "VALUES (?1, ?2, ?3, ?4, coalesce(?5, 'UNKNOWN'), 1, ?6) "
	    "ON CONFLICT (day, test_id, counted, message_id, signature) "
	    "DO UPDATE SET failures = failures + 1, "
	    "last_run_id = max(last_run_id, excluded.last_run_id)",
	[ST_RUN_START] =
	    "INSERT INTO runs (target_id, status, trigger, started_ms, "
	    "revision, in_flight, loadavg, kind, owner_boot, owner_pid, "
	    "owner_start, perturbation, seed, box) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_RUN_FINISH] =
	    "UPDATE runs SET status = ?, ended_ms = ?, duration_us = ?, "
	    "exit_code = ?, signal = ?, revision = coalesce(?, revision), "
	    "runner = ?, runner_version = ?, seed = ?, tests = ?, "
	    "failures = ?, summary_total = ?, in_flight = coalesce(?, "
	    "in_flight), loadavg = coalesce(?, loadavg), user_us = ?, "
	    "sys_us = ?, maxrss_kb = ?, output_bytes = ?, output_dropped = ?, "
	    "stdout_id = ?, stderr_id = ?, error = ?, content_hash = ?, "
	    "started_ms = ?, trigger = coalesce(?, trigger), kind = ?, "
	    "incomplete = ?, perturbation = ?, box = coalesce(?, box) "
	    "WHERE id = ?",
	/* A run stored whole at its end: ST_RUN_FINISH's parameters, the
	 * last one the target. */
	[ST_RUN_INSERT] =
	    "INSERT INTO runs (status, ended_ms, duration_us, exit_code, "
	    "signal, revision, runner, runner_version, seed, tests, failures, "
	    "summary_total, in_flight, loadavg, user_us, sys_us, maxrss_kb, "
	    "output_bytes, output_dropped, stdout_id, stderr_id, error, "
	    "content_hash, started_ms, trigger, kind, incomplete, perturbation, "
	    "box, target_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_TEST_FIND] =
	    "SELECT id FROM tests WHERE target_id = ? AND name = ?",
	[ST_TEST_ADD] =
	    "INSERT INTO tests (target_id, name) VALUES (?, ?)",
	[ST_MSG_FIND] =
	    "SELECT id FROM messages WHERE fingerprint = ?",
	[ST_MSG_ADD] =
	    "INSERT INTO messages (fingerprint, normalized) VALUES (?, ?)",
	[ST_RESULT_ADD] =
	    "INSERT INTO results (run_id, position, test_id, outcome, "
	    "duration_us, message_id, signature, message) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_ROLLUP_UPDATE] =
	    "UPDATE rollups SET runs = runs + ?3, failures = failures + ?4, "
	    "skips = skips + ?5, pass_us = pass_us + ?6, "
	    "fail_us = fail_us + ?7, "
	    "pass_hist = CASE WHEN ?8 IS NULL THEN pass_hist "
	    "ELSE flaky_hist_add(pass_hist, ?8) END, "
	    "fail_hist = CASE WHEN ?9 IS NULL THEN fail_hist "
	    "ELSE flaky_hist_add(fail_hist, ?9) END "
	    "WHERE test_id = ?1 AND day = ?2",
	[ST_ROLLUP] =
	    "INSERT INTO rollups (test_id, day, runs, failures, skips, "
	    "pass_us, fail_us, pass_hist, fail_hist) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
	    "flaky_hist_add(NULL, ?8), flaky_hist_add(NULL, ?9)) "
	    "ON CONFLICT (test_id, day) DO UPDATE SET "
	    "runs = runs + ?3, failures = failures + ?4, skips = skips + ?5, "
	    "pass_us = pass_us + ?6, fail_us = fail_us + ?7, "
	    "pass_hist = CASE WHEN ?8 IS NULL THEN pass_hist "
	    "ELSE flaky_hist_add(pass_hist, ?8) END, "
	    "fail_hist = CASE WHEN ?9 IS NULL THEN fail_hist "
	    "ELSE flaky_hist_add(fail_hist, ?9) END",
	[ST_BOX_ROLLUP] =
	    "INSERT INTO box_rollups (day, test_id, box, runs, failures) "
	    "VALUES (?1, ?3, ?2, ?4, ?5) "
	    "ON CONFLICT (day, test_id, box) DO UPDATE SET "
	    "runs = runs + excluded.runs, "
	    "failures = failures + excluded.failures",
};

/* The statements that write CHUNK results or rollup rows at once:
 * ?1 the run id (results) or the day (rollups; box_rollups, with ?2 the
 * box), then each row's values. */
char *
store_write_many_sql(int which)
{
	struct flaky_buf b;
	int		 k = 2;

	flaky_buf_init(&b);
	if (which == ST_BOX_ROLLUP_MANY) {
		flaky_buf_adds(&b, "INSERT INTO box_rollups (day, test_id, box, "
		    "runs, failures) VALUES ");
		k = 3;
		for (int i = 0; i < CHUNK; i++, k += BOX_COLS)
			flaky_buf_printf(&b, "%s(?1,?%d,?2,?%d,?%d)",
			    i ? "," : "", k, k + 1, k + 2);
		flaky_buf_adds(&b, " ON CONFLICT (day, test_id, box) DO UPDATE "
		    "SET runs = runs + excluded.runs, "
		    "failures = failures + excluded.failures");
	} else if (which == ST_RESULT_MANY)
		flaky_buf_adds(&b, "INSERT INTO results (run_id, position, "
		    "test_id, outcome, duration_us, message_id, signature, "
		    "message) VALUES ");
	else
		flaky_buf_adds(&b, "INSERT INTO rollups (test_id, day, runs, "
		    "failures, skips, pass_us, fail_us, pass_hist, fail_hist) "
		    "VALUES ");
	for (int i = 0; i < CHUNK && which != ST_BOX_ROLLUP_MANY; i++) {
		if (which == ST_RESULT_MANY) {
			flaky_buf_printf(&b, "%s(?1", i ? "," : "");
			for (int j = 0; j < RESULT_COLS; j++)
				flaky_buf_printf(&b, ",?%d", k++);
		} else {
			flaky_buf_printf(&b, "%s(?%d,?1", i ? "," : "", k++);
			for (int j = 0; j < 5; j++)
				flaky_buf_printf(&b, ",?%d", k++);
			flaky_buf_printf(&b, ",?%d,?%d", k, k + 1);
			k += 2;
		}
		flaky_buf_addc(&b, ')');
	}
	if (which == ST_ROLLUP_MANY)
		flaky_buf_adds(&b, " ON CONFLICT (test_id, day) DO UPDATE SET "
		    "runs = runs + excluded.runs, "
		    "failures = failures + excluded.failures, "
		    "skips = skips + excluded.skips, "
		    "pass_us = pass_us + excluded.pass_us, "
		    "fail_us = fail_us + excluded.fail_us, "
		    "pass_hist = CASE WHEN excluded.pass_hist IS NULL "
		    "THEN pass_hist ELSE flaky_hist_add(pass_hist, "
		    "excluded.pass_hist) END, "
		    "fail_hist = CASE WHEN excluded.fail_hist IS NULL "
		    "THEN fail_hist ELSE flaky_hist_add(fail_hist, "
		    "excluded.fail_hist) END");
	if (b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	return flaky_buf_steal(&b);
}
