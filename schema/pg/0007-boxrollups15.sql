-- Rollups per box (schema/0014-boxrollups15.sql, docs/schema.md): a
-- test's runs and failures per day and box, kept by the rollup trigger
-- for the same rows as rollups (a row where rollups have one), so that a
-- report's rates per box cover its whole window from a few rows instead
-- of reading results.

CREATE TABLE box_rollups (
	day		integer NOT NULL,	-- days since 1970-01-01 UTC
	test_id		bigint NOT NULL REFERENCES tests(id),
	box		text NOT NULL,
	runs		integer NOT NULL DEFAULT 0,
	failures	integer NOT NULL DEFAULT 0,
	PRIMARY KEY (day, test_id, box)
);

-- The evidence already on the server, under the migration's lock.
INSERT INTO box_rollups (day, test_id, box, runs, failures)
SELECT (n.started_ms / 86400000)::integer, n.test_id, coalesce(r.box, ''),
       count(*) FILTER (WHERE n.outcome IN (0, 1, 2, 5)),
       count(*) FILTER (WHERE n.outcome IN (1, 2))
FROM results n JOIN runs r ON r.id = n.run_id
WHERE r.kind <> 'alone' AND r.incomplete IS NULL
GROUP BY 1, 2, 3;

-- The trigger groups the inserted rows once, by day, test, box, outcome
-- and duration bucket, and makes both tables' rows from those groups in
-- one statement: a second pass over a batch's rows (200,000 for 200 runs
-- of a 1,000-test suite) cost shipping 8 boxes about a tenth of its
-- speed. Each UPSERT takes its rows in key order (0006); box_rollups
-- rows of two batches meet only when two boxes share a name, which the
-- shipper's claim refuses (lib/fleet/claim.c).
CREATE OR REPLACE FUNCTION flaky_rollup_results() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	WITH g AS (
	    SELECT (n.started_ms / 86400000)::integer AS day, n.test_id,
		coalesce(r.box, '') AS box,
		CASE WHEN n.outcome IN (1, 2) THEN 'f'
		     WHEN n.outcome IN (0, 5) THEN 'p' END AS pf,
		flaky_hist_bucket(n.duration_us) AS bucket,
		count(n.duration_us) AS n,
		count(*) FILTER (WHERE n.outcome IN (0, 1, 2, 5)) AS runs,
		count(*) FILTER (WHERE n.outcome IN (1, 2)) AS failures,
		count(*) FILTER (WHERE n.outcome IN (3, 4)) AS skips,
		coalesce(sum(n.duration_us) FILTER (WHERE n.outcome IN
		    (0, 5)), 0) AS pass_us,
		coalesce(sum(n.duration_us) FILTER (WHERE n.outcome IN
		    (1, 2)), 0) AS fail_us
	    FROM new_results n JOIN runs r ON r.id = n.run_id
	    WHERE r.kind <> 'alone' AND r.incomplete IS NULL
	    GROUP BY 1, 2, 3, 4, 5),
	bx AS (
	    INSERT INTO box_rollups AS b (day, test_id, box, runs, failures)
	    SELECT day, test_id, box, sum(runs), sum(failures) FROM g
	    GROUP BY day, test_id, box
	    ORDER BY day, test_id, box
	    ON CONFLICT (day, test_id, box) DO UPDATE SET
		runs = b.runs + excluded.runs,
		failures = b.failures + excluded.failures)
	INSERT INTO rollups AS ru (day, test_id, runs, failures, skips,
	    pass_us, fail_us, pass_hist, fail_hist)
	SELECT day, test_id, sum(runs), sum(failures), sum(skips),
	    sum(pass_us), sum(fail_us),
	    flaky_hist_agg(bucket, n) FILTER (WHERE pf = 'p'),
	    flaky_hist_agg(bucket, n) FILTER (WHERE pf = 'f')
	FROM g
	GROUP BY day, test_id
	ORDER BY day, test_id
	ON CONFLICT (day, test_id) DO UPDATE SET
	    runs = ru.runs + excluded.runs,
	    failures = ru.failures + excluded.failures,
	    skips = ru.skips + excluded.skips,
	    pass_us = ru.pass_us + excluded.pass_us,
	    fail_us = ru.fail_us + excluded.fail_us,
	    pass_hist = flaky_hist_add(ru.pass_hist, excluded.pass_hist),
	    fail_hist = flaky_hist_add(ru.fail_hist, excluded.fail_hist);
	RETURN NULL;
END $$;
