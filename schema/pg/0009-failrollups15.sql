-- Failures per day, test, message and signature (schema/0016-
-- failrollups15.sql, docs/schema.md): kept by the rollup trigger from its
-- grouping of the batch's failed rows (0008), split by message and
-- signature.

CREATE TABLE failure_rollups (
	day		integer NOT NULL,	-- days since 1970-01-01 UTC
	test_id		bigint NOT NULL REFERENCES tests(id),
	counted		integer NOT NULL,
	message_id	bigint NOT NULL,	-- 0: no message
	signature	text NOT NULL,
	failures	integer NOT NULL DEFAULT 0,
	last_run_id	bigint NOT NULL,
	PRIMARY KEY (day, test_id, counted, message_id, signature)
);

-- The failures already on the server, under the migration's lock.
INSERT INTO failure_rollups (day, test_id, counted, message_id, signature,
			     failures, last_run_id)
SELECT (n.started_ms / 86400000)::integer, n.test_id,
       (r.kind <> 'alone' AND r.incomplete IS NULL)::integer,
       coalesce(n.message_id, 0), coalesce(n.signature, 'UNKNOWN'),
       count(*), max(n.run_id)
FROM results n JOIN runs r ON r.id = n.run_id
WHERE n.outcome IN (1, 2)
GROUP BY 1, 2, 3, 4, 5;

-- The rollup trigger (0008) with failure_rollups from the same groups.
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
	f AS (
	    SELECT (n.started_ms / 86400000)::integer AS day, n.test_id,
		(r.kind <> 'alone' AND r.incomplete IS NULL)::integer
		    AS counted,
		coalesce(n.message_id, 0) AS message_id,
		coalesce(n.signature, 'UNKNOWN') AS signature,
		count(*) AS failures, max(n.run_id) AS last_run_id,
		sum(coalesce(r.duration_us, 0)) AS wall_us,
		sum(coalesce(r.user_us, 0) + coalesce(r.sys_us, 0)) AS cpu_us
	    FROM new_results n JOIN runs r ON r.id = n.run_id
	    WHERE n.outcome IN (1, 2)
	    GROUP BY 1, 2, 3, 4, 5),
	fr AS (
	    INSERT INTO failure_rollups AS x (day, test_id, counted,
		message_id, signature, failures, last_run_id)
	    SELECT day, test_id, counted, message_id, signature, failures,
		last_run_id FROM f
	    ORDER BY day, test_id, counted, message_id, signature
	    ON CONFLICT (day, test_id, counted, message_id, signature)
	    DO UPDATE SET failures = x.failures + excluded.failures,
		last_run_id = greatest(x.last_run_id, excluded.last_run_id)),
	bu AS (
	    INSERT INTO budget AS b (day, test_id, runs, wall_us, cpu_us)
	    SELECT day, test_id, sum(failures), sum(wall_us), sum(cpu_us)
	    FROM f GROUP BY day, test_id
	    ORDER BY day, test_id
	    ON CONFLICT (day, test_id) DO UPDATE SET
		runs = b.runs + excluded.runs,
		wall_us = b.wall_us + excluded.wall_us,
		cpu_us = b.cpu_us + excluded.cpu_us),
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
