-- Boxes shipping at once deadlocked in the rollup trigger (docs/fleet.md,
-- "Rollups"): each batch's UPSERT locks the rows of its tests and days in
-- the order its GROUP BY happens to produce them (a hash aggregate's
-- order, which differs with the keys a batch has), so two batches of the
-- same suite could each hold a row the other waits for. bench/ship_bench.sh
-- hit "deadlock detected" in 2 of 7 runs of 8 boxes. In one order, by day
-- and test, batches wait for each other in turn and never in a cycle, as
-- they do for the names they insert (lib/fleet/ship_sql.c).

CREATE OR REPLACE FUNCTION flaky_rollup_results() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO rollups AS ru (day, test_id, runs, failures, skips,
	    pass_us, fail_us, pass_hist, fail_hist)
	SELECT day, test_id, sum(runs), sum(failures), sum(skips),
	    sum(pass_us), sum(fail_us),
	    flaky_hist_agg(bucket, n) FILTER (WHERE pf = 'p'),
	    flaky_hist_agg(bucket, n) FILTER (WHERE pf = 'f')
	FROM (SELECT (n.started_ms / 86400000)::integer AS day, n.test_id,
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
	      GROUP BY 1, 2, 3, 4) g
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
