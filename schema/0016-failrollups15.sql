-- Failures per day, test, message and signature (docs/schema.md,
-- "failure_rollups"): a report's most common failure of each test and
-- its signature counts come from a few rows a day, where they were
-- counted over the window's failed results at each report (153,900 of
-- them over 30 days of bench/pg_report.sh, about 50 ms each on a
-- server). Written with the run, like the budget (0015), by one
-- statement for a run with failures and none for one without.
--
-- counted is 1 for the runs the rates count (complete, not alone), as
-- rollups have them; message_id 0 is no message, and a result without a
-- signature is counted as UNKNOWN, as the readers name it. last_run_id
-- is the newest run of the row, whose message a report shows.

CREATE TABLE IF NOT EXISTS failure_rollups (
	day		INTEGER NOT NULL,	-- days since 1970-01-01 UTC
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	counted		INTEGER NOT NULL,
	message_id	INTEGER NOT NULL,
	signature	TEXT NOT NULL,
	failures	INTEGER NOT NULL DEFAULT 0,
	last_run_id	INTEGER NOT NULL,
	PRIMARY KEY (day, test_id, counted, message_id, signature)
) WITHOUT ROWID;

-- The failures stored before this migration, once.
INSERT INTO failure_rollups (day, test_id, counted, message_id, signature,
			     failures, last_run_id)
SELECT ru.started_ms / 86400000, r.test_id,
       ru.kind <> 'alone' AND ru.incomplete IS NULL,
       coalesce(r.message_id, 0), coalesce(r.signature, 'UNKNOWN'),
       count(*), max(ru.id)
FROM runs ru JOIN results r ON r.run_id = ru.id
WHERE r.outcome IN (1, 2) AND NOT EXISTS (SELECT 1 FROM failure_rollups)
GROUP BY 1, 2, 3, 4, 5;
