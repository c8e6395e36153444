-- Evidence from CI jobs (issue 29; docs/schema.md, docs/ci.md).
--
-- A run uploaded by a CI job (POST /api/v1/uploads, flakyctl upload) says
-- where it came from: the branch, the pull request, the job, its URL and
-- its attempt (a rerun of the same job is attempt 2), the CI system and
-- its upload. A row of run_ci, for the runs that have one: flakyd's,
-- analyze's and ingest's runs without them have none.
CREATE TABLE IF NOT EXISTS run_ci (
	run_id		INTEGER PRIMARY KEY,	-- runs(id)
	branch		TEXT,
	pr		TEXT,			-- pull or merge request
	job		TEXT,
	job_url		TEXT,
	attempt		INTEGER,		-- 1: the job's first run
	ci		TEXT,			-- github, gitlab, ...
	upload_id	INTEGER			-- uploads(id)
);
CREATE INDEX IF NOT EXISTS run_ci_by_upload ON run_ci(upload_id)
WHERE upload_id IS NOT NULL;

-- Runs by revision, for the runs of one revision (flips below).
CREATE INDEX IF NOT EXISTS runs_by_revision ON runs(target_id, revision)
WHERE revision IS NOT NULL;

-- Tokens that may use the HTTP server, by scope: upload (POST
-- /api/v1/uploads only), read (the dashboard and GET /api/v1), write (the
-- dashboard's actions, and read). Only a SHA-256 of each token is kept;
-- the token itself is printed once, by flakyctl token create.
CREATE TABLE IF NOT EXISTS tokens (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL,
	scope		TEXT NOT NULL CHECK (scope = 'upload' OR
			    scope = 'read' OR scope = 'write'),
	hash		TEXT NOT NULL UNIQUE,	-- hex SHA-256 of the token
	prefix		TEXT NOT NULL,		-- its first characters
	created_ms	INTEGER NOT NULL,
	revoked_ms	INTEGER,
	last_used_ms	INTEGER
);

-- Each upload once: its key is the request's Idempotency-Key, else the
-- hash of its content with the target, job and attempt. Its runs have
-- run_ci.upload_id. A large upload to a server is committed in parts
-- (so that the daemon's own writes never wait long): until stored_ms is
-- set it is being stored, and its last run is still running.
CREATE TABLE IF NOT EXISTS uploads (
	id		INTEGER PRIMARY KEY,
	key		TEXT NOT NULL UNIQUE,
	token_id	INTEGER,		-- tokens(id); NULL: a local write
	received_ms	INTEGER NOT NULL,
	bytes		INTEGER NOT NULL,	-- the body as received
	files		INTEGER NOT NULL,
	stored_ms	INTEGER			-- NULL: being stored
);

-- The outcomes of a test at one revision, for the tests that failed at
-- it: counted runs (complete, suite or ingested) of that revision in which
-- it failed and in which it passed, with one run of each. fails > 0 and
-- passes > 0 is a flip: the same code, both outcomes. A test that failed
-- in every run of a revision and passed at the next is a break and its
-- fix, not a flip. Written with each run (lib/store/flips.c).
CREATE TABLE IF NOT EXISTS revision_outcomes (
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	revision	TEXT NOT NULL,
	fails		INTEGER NOT NULL,
	passes		INTEGER NOT NULL,
	fail_run	INTEGER NOT NULL,	-- the first run it failed in
	pass_run	INTEGER,		-- the first run it passed in
	first_ms	INTEGER NOT NULL,	-- its runs' starts at the
	last_ms		INTEGER NOT NULL,	-- revision, first and last
	PRIMARY KEY (test_id, revision)
) WITHOUT ROWID;
-- The runs stored before this migration, once: the tests that failed at
-- a revision, with their passes there.
INSERT OR IGNORE INTO revision_outcomes (test_id, revision, fails,
			       passes, fail_run, pass_run, first_ms, last_ms)
SELECT r.test_id, ru.revision, sum(r.outcome IN (1, 2)),
       sum(r.outcome IN (0, 5)),
       min(CASE WHEN r.outcome IN (1, 2) THEN ru.id END),
       min(CASE WHEN r.outcome IN (0, 5) THEN ru.id END),
       min(ru.started_ms), max(ru.started_ms)
FROM runs ru JOIN results r ON r.run_id = ru.id
WHERE ru.revision IS NOT NULL AND ru.kind <> 'alone' AND
      ru.incomplete IS NULL AND r.outcome IN (0, 1, 2, 5) AND
      ru.revision IN (SELECT DISTINCT u.revision FROM runs u
		      WHERE u.failures > 0 AND u.revision IS NOT NULL)
GROUP BY r.test_id, ru.revision
HAVING sum(r.outcome IN (1, 2)) > 0;

CREATE INDEX IF NOT EXISTS revision_outcomes_by_time
ON revision_outcomes(last_ms) WHERE passes > 0;
CREATE INDEX IF NOT EXISTS revision_outcomes_by_revision
ON revision_outcomes(revision);

DROP VIEW IF EXISTS flips;
CREATE VIEW flips AS
SELECT tg.name AS target, t.name AS test, o.revision, o.fails, o.passes,
       strftime('%Y-%m-%dT%H:%M:%fZ', o.first_ms / 1000.0, 'unixepoch')
           AS first_run,
       strftime('%Y-%m-%dT%H:%M:%fZ', o.last_ms / 1000.0, 'unixepoch')
           AS last_run,
       o.fail_run AS failed_run_id, fc.job AS failed_job,
       fc.attempt AS failed_attempt, o.pass_run AS passed_run_id,
       pc.job AS passed_job, pc.attempt AS passed_attempt
FROM revision_outcomes o
JOIN tests t ON t.id = o.test_id
JOIN targets tg ON tg.id = t.target_id
LEFT JOIN run_ci fc ON fc.run_id = o.fail_run
LEFT JOIN run_ci pc ON pc.run_id = o.pass_run
WHERE o.fails > 0 AND o.passes > 0;

-- The runs with where they came from, for ad-hoc SQL about CI.
DROP VIEW IF EXISTS ci_runs;
CREATE VIEW ci_runs AS
SELECT r.id AS run_id, tg.name AS target, r.status,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.started_ms / 1000.0, 'unixepoch')
           AS started,
       r.revision, c.branch, c.pr, c.job, c.job_url, c.attempt, c.ci,
       c.upload_id, r.tests, r.failures, r.incomplete
FROM runs r JOIN run_ci c ON c.run_id = r.id
JOIN targets tg ON tg.id = r.target_id;
