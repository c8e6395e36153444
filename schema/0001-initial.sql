-- flaky evidence database, schema version 1.
-- Times are UTC unix milliseconds; the views add ISO-8601 columns.
-- Documented in docs/schema.md; the views are a public interface.

CREATE TABLE targets (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE,
	command		TEXT,			-- as the user gave it
	dir		TEXT,
	created_ms	INTEGER NOT NULL,
	last_fire_ms	INTEGER			-- flakyd: the last trigger
);

CREATE TABLE runs (
	id		INTEGER PRIMARY KEY,
	target_id	INTEGER NOT NULL REFERENCES targets(id),
	status		TEXT NOT NULL DEFAULT 'running' CHECK (status IN
			    ('running', 'done', 'timeout', 'error',
			     'interrupted', 'skipped')),
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
	content_hash	TEXT UNIQUE		-- ingest: the same file once
);
CREATE INDEX runs_by_target ON runs(target_id, started_ms);
CREATE INDEX runs_by_time ON runs(started_ms);

CREATE TABLE tests (
	id		INTEGER PRIMARY KEY,
	target_id	INTEGER NOT NULL REFERENCES targets(id),
	name		TEXT NOT NULL,		-- the runner's own test id
	UNIQUE (target_id, name)
);

-- Normalized failure texts, once per fingerprint.
CREATE TABLE messages (
	id		INTEGER PRIMARY KEY,
	fingerprint	INTEGER NOT NULL UNIQUE,	-- 64-bit hash
	normalized	TEXT NOT NULL
);

-- One row per test per run, clustered by run: a run's results are
-- neighbours on disk, and there is no per-test index on every result.
CREATE TABLE results (
	run_id		INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	position	INTEGER NOT NULL,	-- 0-based run order
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	outcome		INTEGER NOT NULL CHECK (outcome BETWEEN 0 AND 5),
	duration_us	INTEGER,
	message_id	INTEGER REFERENCES messages(id),
	signature	TEXT,			-- failed results only
	message		TEXT,			-- failed results only, bounded
	PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
-- The evidence of failures, per test. It covers the counts of a test's
-- failures by message and by signature (flakyctl report): the failed rows
-- of one test lie all over the table, and reading them there costs a page
-- each. Only failed results are in it, so it stays small.
CREATE INDEX results_failed ON results(test_id, run_id, message_id, outcome,
	signature) WHERE outcome IN (1, 2);

-- Outcome codes, for joins in ad-hoc SQL.
CREATE TABLE outcomes (
	code		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE
);
INSERT INTO outcomes VALUES (0, 'pass'), (1, 'fail'), (2, 'error'),
	(3, 'skip'), (4, 'xfail'), (5, 'xpass');

-- Per test and UTC day (days since 1970-01-01), kept up to date in the
-- transaction of each run. runs counts pass, fail, error and xpass;
-- skips counts skip and xfail. The histograms hold durations in
-- log-scale buckets (see docs/schema.md). Keyed by day first: a run
-- rewrites only the pages of its own day (about 20 for 1,000 tests), not
-- one page per test across the whole history (docs/performance.md).
CREATE TABLE rollups (
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	day		INTEGER NOT NULL,
	runs		INTEGER NOT NULL DEFAULT 0,
	failures	INTEGER NOT NULL DEFAULT 0,
	skips		INTEGER NOT NULL DEFAULT 0,
	pass_us		INTEGER NOT NULL DEFAULT 0,	-- sum of durations
	fail_us		INTEGER NOT NULL DEFAULT 0,
	pass_hist	BLOB,
	fail_hist	BLOB,
	PRIMARY KEY (day, test_id)
) WITHOUT ROWID;

-- Views for people writing SQL.

CREATE VIEW run_list AS
SELECT r.id AS run_id, t.name AS target, r.status, r.trigger,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.started_ms / 1000.0, 'unixepoch')
           AS started,
       r.duration_us / 1000.0 AS duration_ms, r.exit_code, r.signal,
       r.revision, r.runner, r.tests, r.failures, r.seed, r.in_flight,
       r.loadavg, r.error
FROM runs r JOIN targets t ON t.id = r.target_id;

CREATE VIEW test_results AS
SELECT r.id AS run_id, tg.name AS target, t.name AS test,
       o.name AS outcome, res.position, res.duration_us / 1000.0 AS duration_ms,
       res.signature, res.message,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.started_ms / 1000.0, 'unixepoch')
           AS started, r.revision
FROM results res
JOIN runs r ON r.id = res.run_id
JOIN tests t ON t.id = res.test_id
JOIN targets tg ON tg.id = t.target_id
JOIN outcomes o ON o.code = res.outcome;

CREATE VIEW test_stats AS
SELECT tg.name AS target, t.name AS test, SUM(ru.runs) AS runs,
       SUM(ru.failures) AS failures, SUM(ru.skips) AS skips,
       CASE WHEN SUM(ru.runs) > 0
            THEN 1.0 * SUM(ru.failures) / SUM(ru.runs) END AS fail_rate,
       CASE WHEN SUM(ru.runs) = 0 THEN 'none'
            WHEN SUM(ru.failures) = 0 THEN 'stable'
            WHEN SUM(ru.failures) = SUM(ru.runs) THEN 'broken'
            WHEN 1.0 * SUM(ru.failures) / SUM(ru.runs) > 0.20 THEN 'critical'
            WHEN 1.0 * SUM(ru.failures) / SUM(ru.runs) >= 0.05 THEN 'warning'
            ELSE 'noise' END AS tier,
       date(MIN(ru.day) * 86400, 'unixepoch') AS first_day,
       date(MAX(ru.day) * 86400, 'unixepoch') AS last_day
FROM rollups ru
JOIN tests t ON t.id = ru.test_id
JOIN targets tg ON tg.id = t.target_id
GROUP BY ru.test_id;

CREATE VIEW flaky_tests AS
SELECT * FROM test_stats
WHERE failures > 0 AND failures < runs
ORDER BY fail_rate DESC;

CREATE VIEW daily_trend AS
SELECT tg.name AS target, t.name AS test,
       date(ru.day * 86400, 'unixepoch') AS day, ru.runs, ru.failures,
       ru.skips,
       CASE WHEN ru.runs > 0 THEN 1.0 * ru.failures / ru.runs END
           AS fail_rate
FROM rollups ru
JOIN tests t ON t.id = ru.test_id
JOIN targets tg ON tg.id = t.target_id;

CREATE VIEW failure_messages AS
SELECT tg.name AS target, t.name AS test, m.normalized, res.signature,
       COUNT(*) AS count
FROM results res
JOIN tests t ON t.id = res.test_id
JOIN targets tg ON tg.id = t.target_id
LEFT JOIN messages m ON m.id = res.message_id
WHERE res.outcome IN (1, 2)
GROUP BY res.test_id, res.message_id
ORDER BY count DESC;
