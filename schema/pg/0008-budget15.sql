-- The rerun budget of every run and failures per day, test, message and
-- signature (schema/0015-budget15.sql, 0016-failrollups15.sql).
--
-- The rerun budget of every run (docs/history.md): the rollup trigger
-- adds each batch's failed results to budget, with their runs' wall and
-- CPU time, and dropping a partition no longer moves anything there. A
-- report read the window's failed results and runs for it: 153,900
-- results and 27,000 runs over 30 days of bench/pg_report.sh.

-- The runs stored before this migration, under its lock: their share is
-- added to what retention had moved.
INSERT INTO budget AS b (day, test_id, runs, wall_us, cpu_us)
SELECT (r.started_ms / 86400000)::integer, res.test_id, count(*),
       sum(coalesce(r.duration_us, 0)),
       sum(coalesce(r.user_us, 0) + coalesce(r.sys_us, 0))
FROM results res JOIN runs r ON r.id = res.run_id
WHERE res.outcome IN (1, 2)
GROUP BY 1, 2
ORDER BY 1, 2
ON CONFLICT (day, test_id) DO UPDATE SET
    runs = b.runs + excluded.runs,
    wall_us = b.wall_us + excluded.wall_us,
    cpu_us = b.cpu_us + excluded.cpu_us;

CREATE OR REPLACE VIEW daily_budget AS
SELECT tg.name AS target, t.name AS test, flaky_day(b.day) AS day,
       b.runs::bigint AS failed_runs,
       b.wall_us / 1e6 AS wall_s, b.cpu_us / 1e6 AS cpu_s
FROM budget b
JOIN tests t ON t.id = b.test_id
JOIN targets tg ON tg.id = t.target_id;

-- Retention: as in 0002, without moving the budget (it is there).
CREATE OR REPLACE FUNCTION flaky_drop_partitions(before_ms bigint)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	p	record;
	n	integer := 0;
	horizon	bigint;
BEGIN
	PERFORM pg_advisory_xact_lock(hashtext('flaky_make_partitions'));
	FOR p IN SELECT c.relname AS name,
		    (regexp_match(pg_get_expr(c.relpartbound, c.oid),
		    'TO [(]''?(-?[0-9]+)''?[)]'))[1]::bigint AS hi
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'results'::regclass ORDER BY 2 LOOP
		CONTINUE WHEN p.hi > before_ms;
		EXECUTE format('DELETE FROM attempts a USING runs r WHERE '
		    'r.id = a.run_id AND r.started_ms < %s', p.hi);
		EXECUTE format('DROP TABLE %I', p.name);
		horizon := p.hi;
		n := n + 1;
	END LOOP;
	IF horizon IS NOT NULL THEN
		INSERT INTO store_meta (key, value)
		VALUES ('pruned_before_ms', horizon)
		ON CONFLICT (key) DO UPDATE SET
		    value = greatest(store_meta.value, excluded.value);
	END IF;
	RETURN n;
END $$;

-- Failures per day, test, message and signature (docs/schema.md): kept
-- by the rollup trigger from the same grouping of the batch's failed rows
-- as the budget, split by message and signature.

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

-- The rollup trigger (0007) with the budget and failure_rollups: the
-- batch's failed rows, a few in a hundred, grouped apart by day, test,
-- message and signature with their runs' wall and CPU time, for runs of
-- every kind ("counted": the runs that rollups count, complete and not
-- alone, apart from the rest). Grouping every row by those keys too, in
-- the rollups' pass, cost shipping a fifth of its speed
-- (bench/ship_bench.sh).
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
