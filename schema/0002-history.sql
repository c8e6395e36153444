-- History over weeks: rerun budget, per-attempt results of ingested
-- reruns, quarantine and the retention horizon. Documented in
-- docs/history.md.

-- The rerun budget of pruned runs, per UTC day and test: the runs in
-- which the test failed and their wall and CPU time. While raw results
-- are kept, the budget is read from them (through the partial index of
-- failures, so storing a run costs nothing more); prune moves each run's
-- share here before it deletes the run's results. Keyed by day first,
-- like the rollups: a window is one range.
CREATE TABLE budget (
	day		INTEGER NOT NULL,	-- days since 1970-01-01 UTC
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	runs		INTEGER NOT NULL DEFAULT 0,	-- failed runs counted
	wall_us		INTEGER NOT NULL DEFAULT 0,
	cpu_us		INTEGER NOT NULL DEFAULT 0,	-- user + sys
	PRIMARY KEY (day, test_id)
) WITHOUT ROWID;

-- Each attempt of a test that a CI runner retried (JUnit flakyFailure,
-- flakyError, rerunFailure, rerunError), by ingest. The result row keeps
-- the first attempt's outcome; attempt 0 is that one.
CREATE TABLE attempts (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	position	INTEGER NOT NULL,	-- the result's position
	attempt		INTEGER NOT NULL,	-- 0 = the first
	outcome		INTEGER NOT NULL CHECK (outcome BETWEEN 0 AND 5),
	message		TEXT,
	PRIMARY KEY (run_id, position, attempt)
) WITHOUT ROWID;

-- Tests taken out of CI runs; still measured.
CREATE TABLE quarantine (
	test_id		INTEGER PRIMARY KEY REFERENCES tests(id),
	reason		TEXT NOT NULL,
	ticket		TEXT,
	added_ms	INTEGER NOT NULL
);

-- Facts about the database itself: pruned_before_ms is the retention
-- horizon (raw results older than it are gone, rollups stay).
CREATE TABLE store_meta (
	key		TEXT PRIMARY KEY,
	value		INTEGER
) WITHOUT ROWID;

CREATE VIEW quarantined_tests AS
SELECT tg.name AS target, t.name AS test, q.reason, q.ticket,
       strftime('%Y-%m-%dT%H:%M:%SZ', q.added_ms / 1000, 'unixepoch')
           AS added
FROM quarantine q
JOIN tests t ON t.id = q.test_id
JOIN targets tg ON tg.id = t.target_id;

CREATE VIEW daily_budget AS
SELECT tg.name AS target, t.name AS test,
       date(b.day * 86400, 'unixepoch') AS day, sum(b.runs) AS failed_runs,
       sum(b.wall_us) / 1e6 AS wall_s, sum(b.cpu_us) / 1e6 AS cpu_s
FROM (SELECT day, test_id, runs, wall_us, cpu_us FROM budget
      UNION ALL
      SELECT r.started_ms / 86400000, res.test_id, 1,
             coalesce(r.duration_us, 0),
             coalesce(r.user_us, 0) + coalesce(r.sys_us, 0)
      FROM results res JOIN runs r ON r.id = res.run_id
      WHERE res.outcome IN (1, 2)) b
JOIN tests t ON t.id = b.test_id
JOIN targets tg ON tg.id = t.target_id
GROUP BY b.test_id, b.day;
