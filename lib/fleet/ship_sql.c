/* The SQL of a batch on the server (ship.c): the staging tables, then
 * names and runs moved into the real tables (results go there straight,
 * with COPY). */
#include "buildconf.h"

#include "fleet_ship.h"

/* A batch's transaction. The box forgets a batch once the server said it
 * committed: that must hold through a crash of the server, whatever its
 * default (synchronous_commit = off acknowledges before the WAL is
 * written; the test of pg_ctl stop -m immediate mid-batch lost batches
 * so). The box sends the rollups' sums of its results (ship_rollup.c):
 * the rollup trigger skips the COPY of them (schema/pg/0009). The COPY's
 * transition table, 50,000 rows, stays in memory. */
const char fleet_ship_sql_begin[] =
    "BEGIN; SET LOCAL synchronous_commit TO on; "
    "SET LOCAL flaky.rollups TO 'sent'; SET LOCAL work_mem TO '64MB'";

/* Temporary, emptied at each commit: a batch sees only its own rows. */
const char fleet_ship_sql_staging[] =
    "CREATE TEMP TABLE IF NOT EXISTS ship_runs (local_id bigint, "
    "target text, status text, kind text, trigger text, started_ms bigint, "
    "ended_ms bigint, duration_us bigint, exit_code integer, "
    "signal integer, revision text, runner text, runner_version text, "
    "seed text, tests integer, failures integer, summary_total integer, "
    "in_flight integer, loadavg double precision, user_us bigint, "
    "sys_us bigint, maxrss_kb bigint, output_bytes bigint, "
    "output_dropped bigint, error text, content_hash text, "
    "incomplete text, perturbation text, stdout_hash bigint, "
    "stdout_size bigint, stdout_data bytea, stderr_hash bigint, "
    "stderr_size bigint, stderr_data bytea, selected integer, "
    "target_command text, target_dir text) "
    "ON COMMIT DELETE ROWS;"
    "CREATE TEMP TABLE IF NOT EXISTS ship_tests (local_test bigint, "
    "target text, name text) ON COMMIT DELETE ROWS;"
    "CREATE TEMP TABLE IF NOT EXISTS ship_messages (fingerprint bigint, "
    "normalized text) ON COMMIT DELETE ROWS;"
    "CREATE TEMP TABLE IF NOT EXISTS ship_attempts (local_run bigint, "
    "position integer, attempt integer, outcome smallint, message text) "
    "ON COMMIT DELETE ROWS;"
    "CREATE TEMP TABLE IF NOT EXISTS ship_polluters (local_test bigint, "
    "local_run bigint, candidates integer, members text, reruns integer, "
    "minimal integer, command text, made_ms bigint) "
    "ON COMMIT DELETE ROWS;"
    "CREATE TEMP TABLE IF NOT EXISTS ship_testmap (local_test bigint, "
    "id bigint) ON COMMIT DELETE ROWS;"
    "CREATE TEMP TABLE IF NOT EXISTS ship_rollups (day integer, "
    "test_id bigint, runs integer, failures integer, skips integer, "
    "pass_us bigint, fail_us bigint, pass_hist integer[], "
    "fail_hist integer[]) ON COMMIT DELETE ROWS;"
    "CREATE TEMP TABLE IF NOT EXISTS ship_failures (day integer, "
    "test_id bigint, counted integer, message_id bigint, signature text, "
    "failures integer, last_run_id bigint, wall_us bigint, cpu_us bigint) "
    "ON COMMIT DELETE ROWS";

/* Names first, each in one order (boxes wait, never deadlock); tests
 * already there are not inserted again (no speculative insertion for
 * each). A target's command and directory are the box's, each kept when
 * the box has none (ingest), as the box's own store keeps them: written
 * only when they differ, so a batch of a target as the server has it
 * changes (and locks) nothing. The
 * partitions of the batch's weeks are made only when one is missing:
 * flaky_make_partitions locks until the commit. */
const char fleet_ship_sql_names[] =
    "INSERT INTO targets AS tg (name, command, dir, created_ms) "
    "SELECT DISTINCT ON (target) target, target_command, target_dir, "
    "min(started_ms) OVER (PARTITION BY target) FROM ship_runs "
    "ORDER BY target ON CONFLICT (name) DO UPDATE SET "
    "command = coalesce(excluded.command, tg.command), "
    "dir = coalesce(excluded.dir, tg.dir) "
    "WHERE (tg.command, tg.dir) IS DISTINCT FROM "
    "(coalesce(excluded.command, tg.command), "
    "coalesce(excluded.dir, tg.dir));"
    "INSERT INTO tests (target_id, name) SELECT tg.id, st.name "
    "FROM ship_tests st JOIN targets tg ON tg.name = st.target "
    "WHERE NOT EXISTS (SELECT 1 FROM tests t WHERE t.target_id = tg.id "
    "AND t.name = st.name) ORDER BY 1, 2 "
    "ON CONFLICT (target_id, name) DO NOTHING;"
    "INSERT INTO ship_testmap SELECT st.local_test, t.id "
    "FROM ship_tests st JOIN targets tg ON tg.name = st.target "
    "JOIN tests t ON t.target_id = tg.id AND t.name = st.name;"
    "INSERT INTO messages (fingerprint, normalized) "
    "SELECT fingerprint, normalized FROM ship_messages "
    "ORDER BY fingerprint ON CONFLICT (fingerprint) DO NOTHING;"
    "INSERT INTO outputs (hash, size, data) "
    "SELECT DISTINCT ON (h) h, sz, d FROM ("
    "SELECT stdout_hash h, stdout_size sz, stdout_data d FROM ship_runs "
    "WHERE stdout_hash IS NOT NULL UNION ALL "
    "SELECT stderr_hash, stderr_size, stderr_data FROM ship_runs "
    "WHERE stderr_hash IS NOT NULL) x ORDER BY h "
    "ON CONFLICT (hash) DO NOTHING;"
    "SELECT flaky_make_partitions(a, b) FROM (SELECT min(started_ms) a, "
    "max(started_ms) b FROM ship_runs) m WHERE a IS NOT NULL AND EXISTS ("
    "SELECT 1 FROM generate_series(a - ((a % 604800000) + 604800000) "
    "% 604800000, b, 604800000) w WHERE to_regclass('results_' || "
    "to_char(to_timestamp(w / 1000) AT TIME ZONE 'UTC', 'YYYYMMDD')) "
    "IS NULL)";

/* Runs new to the server, by (box, local_id); their server ids returned
 * for their results. */
const char fleet_ship_sql_runs[] =
    "INSERT INTO runs (box, local_id, target_id, status, "
    "kind, trigger, started_ms, ended_ms, duration_us, exit_code, signal, "
    "revision, runner, runner_version, seed, tests, failures, "
    "summary_total, in_flight, loadavg, user_us, sys_us, maxrss_kb, "
    "output_bytes, output_dropped, error, content_hash, incomplete, "
    "perturbation, stdout_id, stderr_id, selected) "
    "SELECT $1, s.local_id, tg.id, s.status, s.kind, s.trigger, "
    "s.started_ms, s.ended_ms, s.duration_us, s.exit_code, s.signal, "
    "s.revision, s.runner, s.runner_version, s.seed, s.tests, s.failures, "
    "s.summary_total, s.in_flight, s.loadavg, s.user_us, s.sys_us, "
    "s.maxrss_kb, s.output_bytes, s.output_dropped, s.error, "
    "s.content_hash, s.incomplete, s.perturbation, o.id, e.id, "
    "s.selected "
    "FROM ship_runs s JOIN targets tg ON tg.name = s.target "
    "LEFT JOIN outputs o ON o.hash = s.stdout_hash "
    "LEFT JOIN outputs e ON e.hash = s.stderr_hash "
    "ORDER BY s.local_id ON CONFLICT DO NOTHING "
    "RETURNING local_id, id, started_ms";

/* The attempts of the batch's runs on the server ($1: the box), keyed by
 * the server's run id: an attempt there already is not stored again (a
 * batch sent twice), one missing is (a run shipped before attempts were,
 * queued again on its box). */
const char fleet_ship_sql_attempts[] =
    "INSERT INTO attempts (run_id, position, attempt, outcome, message) "
    "SELECT r.id, a.position, a.attempt, a.outcome, a.message "
    "FROM ship_attempts a JOIN runs r ON r.box = $1 "
    "AND r.local_id = a.local_run ORDER BY 1, 2, 3 "
    "ON CONFLICT DO NOTHING";

/* A box's polluters under the server's test ids ($1: the box); the run
 * narrowed is the server's id of the box's run, NULL while that run has
 * not arrived. The newest finding of a test is kept, whichever box made
 * it: an older one (sent again, or from a box whose finding is stale)
 * changes nothing. */
const char fleet_ship_sql_polluters[] =
    "INSERT INTO polluters AS p (test_id, from_run_id, candidates, "
    "members, reruns, minimal, command, made_ms) "
    "SELECT DISTINCT ON (tm.id) tm.id, r.id, s.candidates, s.members, "
    "s.reruns, s.minimal, s.command, s.made_ms FROM ship_polluters s "
    "JOIN ship_testmap tm ON tm.local_test = s.local_test "
    "LEFT JOIN runs r ON r.box = $1 AND r.local_id = s.local_run "
    "ORDER BY tm.id, s.made_ms DESC "
    "ON CONFLICT (test_id) DO UPDATE SET "
    "from_run_id = excluded.from_run_id, candidates = excluded.candidates, "
    "members = excluded.members, reruns = excluded.reruns, "
    "minimal = excluded.minimal, command = excluded.command, "
    "made_ms = excluded.made_ms WHERE p.made_ms < excluded.made_ms";

/* The batch's sums (ship_rollup.c) into the rollups, as the trigger adds
 * its own (schema/pg/0008-budget15.sql), in the same order ($1: the box).
 * Failures are grouped again: two signatures the box tells apart may be
 * one text on the server (invalid UTF-8 made U+FFFD). */
const char fleet_ship_sql_sums[] =
    "WITH f AS (SELECT day, test_id, counted, message_id, signature, "
    "sum(failures) AS failures, max(last_run_id) AS last_run_id, "
    "sum(wall_us) AS wall_us, sum(cpu_us) AS cpu_us FROM ship_failures "
    "GROUP BY 1, 2, 3, 4, 5), "
    "fr AS (INSERT INTO failure_rollups AS x (day, test_id, counted, "
    "message_id, signature, failures, last_run_id) "
    "SELECT day, test_id, counted, message_id, signature, failures, "
    "last_run_id FROM f "
    "ORDER BY day, test_id, counted, message_id, signature "
    "ON CONFLICT (day, test_id, counted, message_id, signature) "
    "DO UPDATE SET failures = x.failures + excluded.failures, "
    "last_run_id = greatest(x.last_run_id, excluded.last_run_id)), "
    "bu AS (INSERT INTO budget AS b (day, test_id, runs, wall_us, cpu_us) "
    "SELECT day, test_id, sum(failures), sum(wall_us), sum(cpu_us) "
    "FROM f GROUP BY day, test_id ORDER BY day, test_id "
    "ON CONFLICT (day, test_id) DO UPDATE SET runs = b.runs + "
    "excluded.runs, wall_us = b.wall_us + excluded.wall_us, "
    "cpu_us = b.cpu_us + excluded.cpu_us), "
    "bx AS (INSERT INTO box_rollups AS b (day, test_id, box, runs, "
    "failures) SELECT day, test_id, $1, runs, failures FROM ship_rollups "
    "ORDER BY day, test_id "
    "ON CONFLICT (day, test_id, box) DO UPDATE SET "
    "runs = b.runs + excluded.runs, "
    "failures = b.failures + excluded.failures) "
    "INSERT INTO rollups AS ru (day, test_id, runs, failures, skips, "
    "pass_us, fail_us, pass_hist, fail_hist) "
    "SELECT day, test_id, runs, failures, skips, pass_us, fail_us, "
    "pass_hist, fail_hist FROM ship_rollups ORDER BY day, test_id "
    "ON CONFLICT (day, test_id) DO UPDATE SET "
    "runs = ru.runs + excluded.runs, "
    "failures = ru.failures + excluded.failures, "
    "skips = ru.skips + excluded.skips, "
    "pass_us = ru.pass_us + excluded.pass_us, "
    "fail_us = ru.fail_us + excluded.fail_us, "
    "pass_hist = flaky_hist_add(ru.pass_hist, excluded.pass_hist), "
    "fail_hist = flaky_hist_add(ru.fail_hist, excluded.fail_hist)";
