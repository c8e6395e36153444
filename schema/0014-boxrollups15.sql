-- Rollups per box (docs/schema.md, "box_rollups"): a test's runs and
-- failures per day and box, so that a report's rates per box ("30% on
-- box-a (9/30), 0% on box-b (0/30)") cover the report's whole window from
-- a few rows, where they were read from the results of the newest runs
-- only. Written beside rollups, for the same runs (finished, complete,
-- not alone) and with a row where rollups have one (a day of skips only
-- too), so that a test's boxes of a day add up to its rollups row. box
-- is the run's as stored, '' for a run of before 0009-box15.sql (the
-- store's own box, as runs.box NULL is).
--
-- Keyed by day first, like rollups: a run's upserts all land in today's
-- few pages, not one page per test across the history.

CREATE TABLE IF NOT EXISTS box_rollups (
	day		INTEGER NOT NULL,	-- days since 1970-01-01 UTC
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	box		TEXT NOT NULL,
	runs		INTEGER NOT NULL DEFAULT 0,
	failures	INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (day, test_id, box)
) WITHOUT ROWID;

-- The evidence stored before this migration, once (the table is empty
-- only then: a run of a counted kind always adds a row).
INSERT INTO box_rollups (day, test_id, box, runs, failures)
SELECT ru.started_ms / 86400000, r.test_id, coalesce(ru.box, ''),
       sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2))
FROM runs ru JOIN results r ON r.run_id = ru.id
WHERE ru.kind <> 'alone' AND ru.incomplete IS NULL
  AND NOT EXISTS (SELECT 1 FROM box_rollups)
GROUP BY 1, 2, 3;
