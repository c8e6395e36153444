-- The dashboard a team keeps open (issue 32; docs/schema.md,
-- docs/dashboard.md): rates per branch from rollups, what a team wrote
-- about a test (its ticket, its owner), and every action on a test with
-- who took it and when.
--
-- Rollups per branch: a test's runs and failures per day and CI branch
-- (run_ci.branch), for the counted runs (complete, suite or ingested)
-- that name one. Added when a run's CI metadata is written (after its
-- results, in the same transaction: lib/store/notes.c), so that a rate
-- per branch, and the dashboard's filter by branch, read a few rows
-- instead of results.
CREATE TABLE IF NOT EXISTS branch_rollups (
	day		INTEGER NOT NULL,	-- days since 1970-01-01 UTC
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	branch		TEXT NOT NULL,
	runs		INTEGER NOT NULL DEFAULT 0,	-- pass, fail, error, xpass
	failures	INTEGER NOT NULL DEFAULT 0,	-- fail, error
	PRIMARY KEY (day, test_id, branch)
) WITHOUT ROWID;
-- The CI runs stored before this migration, once.
INSERT INTO branch_rollups (day, test_id, branch, runs, failures)
SELECT ru.started_ms / 86400000, r.test_id, c.branch,
       sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2))
FROM run_ci c JOIN runs ru ON ru.id = c.run_id
JOIN results r ON r.run_id = ru.id
WHERE c.branch IS NOT NULL AND ru.kind <> 'alone' AND
      ru.incomplete IS NULL AND ru.status <> 'running' AND
      NOT EXISTS (SELECT 1 FROM branch_rollups)
GROUP BY 1, 2, 3
HAVING sum(r.outcome IN (0, 1, 2, 5)) > 0;

-- What a team wrote about a test: the ticket that tracks it (a URL) and
-- who owns it, beside what CODEOWNERS says. Set by the dashboard's
-- actions, flakyctl mark and the API (each recorded in actions below).
CREATE TABLE IF NOT EXISTS test_notes (
	test_id		INTEGER PRIMARY KEY REFERENCES tests(id),
	ticket		TEXT,			-- NULL: none linked
	owner		TEXT,			-- NULL: CODEOWNERS' alone
	updated_ms	INTEGER NOT NULL
);

-- Every action on a test, whoever took it: quarantine (value: the
-- reason), release, ticket (value: the URL; NULL unlinks), owner (value:
-- the owner; NULL clears). who: the token's name over HTTP, the user's
-- login name from flakyctl.
CREATE TABLE IF NOT EXISTS actions (
	id		INTEGER PRIMARY KEY,
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	action		TEXT NOT NULL CHECK (action IN ('quarantine',
			    'release', 'ticket', 'owner')),
	value		TEXT,
	who		TEXT NOT NULL,
	via		TEXT NOT NULL CHECK (via IN ('cli', 'http')),
	at_ms		INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS actions_by_test ON actions(test_id, at_ms);
CREATE INDEX IF NOT EXISTS actions_by_time ON actions(at_ms);

-- The actions with their test, for ad-hoc SQL ("who quarantined what").
DROP VIEW IF EXISTS test_actions;
CREATE VIEW test_actions AS
SELECT a.id, tg.name AS target, t.name AS test, a.action, a.value, a.who,
       a.via,
       strftime('%Y-%m-%dT%H:%M:%fZ', a.at_ms / 1000.0, 'unixepoch') AS at
FROM actions a
JOIN tests t ON t.id = a.test_id
JOIN targets tg ON tg.id = t.target_id;
