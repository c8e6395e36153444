-- Schema version 5: what each run was, whether its outcomes are whole, and
-- who owns a running row.
--
-- runs.kind: suite (the target's command: schedule, analyze), alone (one
-- test rerun alone: confirm, isolation) or ingested (CI files). The rollups,
-- and so test_stats, flaky_tests, daily_trend and every rate, hold only
-- complete suite and ingested runs; runs alone keep their results (the
-- evidence) and give their own verdict (alone_stats).
-- runs.incomplete: why some outcomes are missing (NULL: complete). Such a
-- run keeps its results but is counted in no rate.
-- runs.status may be 'stopped': ended by its caller's budget, not a limit.
-- runs.owner_*: the process that writes a running row (boot id, pid, the
-- pid's start time in clock ticks since boot), so that a writer opening the
-- database marks interrupted only the rows whose owner is gone.
--
-- SQLite changes a CHECK constraint only by rebuilding the table (ALTER
-- TABLE, section 7: "making other kinds of table schema changes"). The
-- program runs this file with foreign keys off (a DROP TABLE with them on
-- would delete every result through ON DELETE CASCADE) and checks them with
-- PRAGMA foreign_key_check before it commits. Ids are copied, so results,
-- attempts and every other reference stay valid. The views that name runs
-- are dropped first (renaming a table checks every view) and made again.

DROP VIEW IF EXISTS run_list;
DROP VIEW IF EXISTS test_results;
DROP VIEW IF EXISTS daily_budget;
DROP VIEW IF EXISTS alone_stats;	-- a database made newer, then marked older

CREATE TABLE runs_new (
	id		INTEGER PRIMARY KEY,
	target_id	INTEGER NOT NULL REFERENCES targets(id),
	status		TEXT NOT NULL DEFAULT 'running' CHECK (status =
			    'running' OR status = 'done' OR
			    status = 'timeout' OR status = 'error' OR
			    status = 'interrupted' OR status = 'skipped' OR
			    status = 'stopped'),
	trigger		TEXT,			-- analyze, schedule, manual, ingest
	started_ms	INTEGER NOT NULL,
	ended_ms	INTEGER,
	duration_us	INTEGER,
	exit_code	INTEGER,		-- NULL when killed by a signal
	signal		INTEGER,
	revision	TEXT,
	runner		TEXT,			-- pytest, unittest, jest, ...
	runner_version	TEXT,
	seed		TEXT,			-- random-order seed, if printed
	tests		INTEGER,		-- results stored
	failures	INTEGER,		-- failed or errored results
	summary_total	INTEGER,		-- the runner's own count
	in_flight	INTEGER,		-- runs at once when it started
	loadavg		REAL,
	user_us		INTEGER,
	sys_us		INTEGER,
	maxrss_kb	INTEGER,
	output_bytes	INTEGER,		-- produced, stdout + stderr
	output_dropped	INTEGER,		-- produced but not kept
	stdout		BLOB,			-- head, marker, tail; redacted
	stderr		BLOB,
	error		TEXT,			-- why it did not run, warnings
	content_hash	TEXT UNIQUE,		-- ingest: the same file once
	kind		TEXT NOT NULL DEFAULT 'suite' CHECK (kind = 'suite'
			    OR kind = 'alone' OR kind = 'ingested'),
	incomplete	TEXT,			-- why outcomes are missing
	owner_boot	TEXT,			-- running rows: the writer's
	owner_pid	INTEGER,		-- boot id, pid and the pid's
	owner_start	INTEGER			-- start time (/proc/PID/stat 22)
);

INSERT INTO runs_new (id, target_id, status, trigger, started_ms, ended_ms,
	duration_us, exit_code, signal, revision, runner, runner_version, seed,
	tests, failures, summary_total, in_flight, loadavg, user_us, sys_us,
	maxrss_kb, output_bytes, output_dropped, stdout, stderr, error,
	content_hash, kind)
SELECT id, target_id, status, trigger, started_ms, ended_ms, duration_us,
	exit_code, signal, revision, runner, runner_version, seed, tests,
	failures, summary_total, in_flight, loadavg, user_us, sys_us, maxrss_kb,
	output_bytes, output_dropped, stdout, stderr, error, content_hash,
	CASE trigger WHEN 'confirm' THEN 'alone' WHEN 'ingest' THEN 'ingested'
	    ELSE 'suite' END
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;

CREATE INDEX runs_by_target ON runs(target_id, started_ms);
CREATE INDEX runs_by_time ON runs(started_ms);
-- Opening a database for writing looks for rows whose owner is gone: only
-- the running rows are in this index, so that look costs nothing.
CREATE INDEX runs_running ON runs(id) WHERE status = 'running';
-- Runs alone are few: their verdict is read from their raw results, found
-- through this index instead of a scan of every run.
CREATE INDEX runs_alone ON runs(started_ms) WHERE kind = 'alone';

-- The rollups held the confirm runs until now: take their counts out, so
-- that rates count suite and ingested runs only. (Their durations stay in
-- the histograms, which cannot be taken apart; medians move by little.)
UPDATE rollups SET runs = rollups.runs - d.runs,
	failures = rollups.failures - d.failures,
	skips = rollups.skips - d.skips,
	pass_us = max(0, rollups.pass_us - d.pass_us),
	fail_us = max(0, rollups.fail_us - d.fail_us)
FROM (SELECT res.test_id, r.started_ms / 86400000 AS day,
	    sum(res.outcome IN (0, 1, 2, 5)) AS runs,
	    sum(res.outcome IN (1, 2)) AS failures,
	    sum(res.outcome IN (3, 4)) AS skips,
	    sum(CASE WHEN res.outcome IN (0, 5)
		THEN coalesce(res.duration_us, 0) ELSE 0 END) AS pass_us,
	    sum(CASE WHEN res.outcome IN (1, 2)
		THEN coalesce(res.duration_us, 0) ELSE 0 END) AS fail_us
      FROM runs r JOIN results res ON res.run_id = r.id
      WHERE r.kind = 'alone'
      GROUP BY res.test_id, day) d
WHERE rollups.test_id = d.test_id AND rollups.day = d.day;
-- Every result adds to runs or skips: a row with neither held runs alone
-- only.
DELETE FROM rollups WHERE runs <= 0 AND skips <= 0;

CREATE VIEW run_list AS
SELECT r.id AS run_id, t.name AS target, r.status, r.trigger,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.started_ms / 1000.0, 'unixepoch')
           AS started,
       r.duration_us / 1000.0 AS duration_ms, r.exit_code, r.signal,
       r.revision, r.runner, r.tests, r.failures, r.seed, r.in_flight,
       r.loadavg, r.error, r.kind, r.incomplete
FROM runs r JOIN targets t ON t.id = r.target_id;

CREATE VIEW test_results AS
SELECT r.id AS run_id, tg.name AS target, t.name AS test,
       o.name AS outcome, res.position, res.duration_us / 1000.0 AS duration_ms,
       res.signature, res.message,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.started_ms / 1000.0, 'unixepoch')
           AS started, r.revision, r.kind, r.incomplete
FROM results res
JOIN runs r ON r.id = res.run_id
JOIN tests t ON t.id = res.test_id
JOIN targets tg ON tg.id = t.target_id
JOIN outcomes o ON o.code = res.outcome;

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

-- The verdict of runs alone per test, beside the suite's rate in
-- test_stats: "passes alone 30/30", "fails alone 9/30". Complete runs
-- alone only, from their raw results (pruned runs are gone from it).
CREATE VIEW alone_stats AS
SELECT tg.name AS target, t.name AS test,
       sum(res.outcome IN (0, 1, 2, 5)) AS runs_alone,
       sum(res.outcome IN (1, 2)) AS failures_alone,
       strftime('%Y-%m-%dT%H:%M:%fZ', max(r.started_ms) / 1000.0,
           'unixepoch') AS last_alone
FROM runs r
CROSS JOIN results res ON res.run_id = r.id
CROSS JOIN tests t ON t.id = res.test_id
CROSS JOIN targets tg ON tg.id = t.target_id
WHERE r.kind = 'alone' AND r.incomplete IS NULL
GROUP BY res.test_id;
