-- The rest of schema/*.sql on PostgreSQL: rollups kept up as evidence
-- arrives, the history tables, retention by partition, and the views of
-- docs/schema.md under the same names and columns.

-- Per test and UTC day, as on SQLite (0001, 0005): runs counts pass,
-- fail, error and xpass of complete suite and ingested runs; skips counts
-- skip and xfail. The histograms are arrays indexed by bucket + 1 (bucket
-- b as in docs/schema.md: 0 under 1 ms, b from 2^((b-1)/4) ms), where the
-- SQLite blobs hold (bucket, count) pairs: pass_hist[b + 1] is a count.
CREATE TABLE rollups (
	day		integer NOT NULL,	-- days since 1970-01-01 UTC
	test_id		bigint NOT NULL REFERENCES tests(id),
	runs		integer NOT NULL DEFAULT 0,
	failures	integer NOT NULL DEFAULT 0,
	skips		integer NOT NULL DEFAULT 0,
	pass_us		bigint NOT NULL DEFAULT 0,	-- sum of durations
	fail_us		bigint NOT NULL DEFAULT 0,
	pass_hist	integer[],
	fail_hist	integer[],
	PRIMARY KEY (day, test_id)
);

-- The histogram bucket of a duration (lib/store/hist.c).
CREATE FUNCTION flaky_hist_bucket(us bigint) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT CASE WHEN us IS NULL THEN NULL WHEN us < 1000 THEN 0
	    ELSE least(127, 1 + floor(4 * ln(us / 1000.0::float8) /
	    ln(2.0::float8))::integer) END
$$;

-- h with n more in bucket b (an aggregate's step: flaky_hist_agg).
CREATE FUNCTION flaky_hist_put(h integer[], b integer, n bigint)
RETURNS integer[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	IF b IS NULL OR n IS NULL OR n = 0 THEN
		RETURN h;
	END IF;
	h[b + 1] := coalesce(h[b + 1], 0) + n;
	RETURN h;
END $$;

CREATE AGGREGATE flaky_hist_agg(integer, bigint) (
	SFUNC = flaky_hist_put, STYPE = integer[]);

-- The sum of two histograms (NULL: empty).
CREATE FUNCTION flaky_hist_add(a integer[], b integer[])
RETURNS integer[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	IF a IS NULL THEN
		RETURN b;
	END IF;
	IF b IS NULL THEN
		RETURN a;
	END IF;
	FOR i IN array_lower(b, 1) .. array_upper(b, 1) LOOP
		IF b[i] IS NOT NULL THEN
			a[i] := coalesce(a[i], 0) + b[i];
		END IF;
	END LOOP;
	RETURN a;
END $$;

-- The rollups of the results one statement inserted (a COPY of a
-- shipping batch, or a run's INSERT): one GROUP BY over the statement's
-- rows and one UPSERT per test and day, not a trigger call per row, so
-- COPY keeps its speed; and every writer keeps the rollups right without
-- having to remember to. A run's row must be final (kind, incomplete)
-- before its results are inserted: the writers insert a finished run.
CREATE FUNCTION flaky_rollup_results() RETURNS trigger
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

CREATE TRIGGER results_rollup AFTER INSERT ON results
	REFERENCING NEW TABLE AS new_results
	FOR EACH STATEMENT EXECUTE FUNCTION flaky_rollup_results();

-- History (0002-history.sql): see docs/history.md.
CREATE TABLE budget (
	day		integer NOT NULL,
	test_id		bigint NOT NULL REFERENCES tests(id),
	runs		integer NOT NULL DEFAULT 0,
	wall_us		bigint NOT NULL DEFAULT 0,
	cpu_us		bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (day, test_id)
);

CREATE TABLE attempts (
	run_id		bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	position	integer NOT NULL,
	attempt		integer NOT NULL,
	outcome		smallint NOT NULL CHECK (outcome BETWEEN 0 AND 5),
	message		text,
	PRIMARY KEY (run_id, position, attempt)
);

CREATE TABLE quarantine (
	test_id		bigint PRIMARY KEY REFERENCES tests(id),
	reason		text NOT NULL,
	ticket		text,
	added_ms	bigint NOT NULL
);

CREATE TABLE store_meta (
	key		text PRIMARY KEY,
	value		bigint
);

-- 0003-scan.sql
CREATE TABLE scan_findings (
	id		bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	target_id	bigint NOT NULL REFERENCES targets(id),
	scanned_ms	bigint NOT NULL,
	path		text NOT NULL,
	line		integer NOT NULL,
	category	text NOT NULL CHECK (category IN ('comparison',
			    'unittest', 'torch', 'numpy', 'approx')),
	classes		text,
	function	text,
	test		text,
	tolerance	text,
	source		text,
	seeded		integer NOT NULL,
	pytest_id	text,
	unittest_id	text
);
CREATE INDEX scan_by_target ON scan_findings(target_id, pytest_id);

-- 0006-outputs.sql. On PostgreSQL data holds the content itself
-- (length(data) = size): the server compresses it (TOAST), so the view
-- needs no zlib. sqlar_uncompress exists so that the SQL of docs/schema.md
-- runs as written on both.
CREATE TABLE outputs (
	id		bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	hash		bigint UNIQUE,
	size		bigint NOT NULL,
	data		bytea NOT NULL
);

CREATE FUNCTION sqlar_uncompress(data bytea, size bigint) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF data IS NULL OR size IS NULL OR size <= 0 OR length(data) = size THEN
		RETURN data;
	END IF;
	RAISE EXCEPTION 'outputs: deflated data; on PostgreSQL outputs hold '
	    'the content itself (docs/fleet.md)';
END $$;

-- 0007-polluters.sql
CREATE TABLE polluters (
	test_id		bigint PRIMARY KEY REFERENCES tests(id),
	from_run_id	bigint,
	candidates	integer NOT NULL,
	members		text NOT NULL,
	reruns		integer NOT NULL,
	minimal		integer NOT NULL CHECK (minimal IN (0, 1)),
	command		text NOT NULL,
	made_ms		bigint NOT NULL
);

-- Retention: drop the partitions of results wholly older than before_ms
-- (a DROP is instant and leaves no dead rows, where a DELETE of millions
-- would not). As prune does on SQLite, each failed result's share of the
-- rerun budget moves to budget first, and pruned_before_ms records the
-- horizon. Rollups, runs and messages stay. Returns the partitions dropped.
CREATE FUNCTION flaky_drop_partitions(before_ms bigint)
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
		EXECUTE format('INSERT INTO budget AS b (day, test_id, runs, '
		    'wall_us, cpu_us) SELECT (r.started_ms / 86400000)::integer,'
		    ' x.test_id, count(*), sum(coalesce(r.duration_us, 0)), '
		    'sum(coalesce(r.user_us, 0) + coalesce(r.sys_us, 0)) '
		    'FROM %I x JOIN runs r ON r.id = x.run_id '
		    'WHERE x.outcome IN (1, 2) GROUP BY 1, 2 '
		    'ON CONFLICT (day, test_id) DO UPDATE SET '
		    'runs = b.runs + excluded.runs, '
		    'wall_us = b.wall_us + excluded.wall_us, '
		    'cpu_us = b.cpu_us + excluded.cpu_us', p.name);
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

-- The ISO-8601 forms of the views: strftime('%Y-%m-%dT%H:%M:%fZ') and
-- date(day * 86400, 'unixepoch') of SQLite.
CREATE FUNCTION flaky_iso(ms bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT to_char(timestamp 'epoch' + ms * interval '1 millisecond',
	    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
CREATE FUNCTION flaky_iso_s(ms bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT to_char(timestamp 'epoch' + (ms / 1000) * interval '1 second',
	    'YYYY-MM-DD"T"HH24:MI:SS"Z"')
$$;
CREATE FUNCTION flaky_day(day integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT to_char(date '1970-01-01' + day, 'YYYY-MM-DD')
$$;

-- Views for people writing SQL: the columns of schema/*.sql, in order.

CREATE VIEW run_list AS
SELECT r.id AS run_id, t.name AS target, r.status, r.trigger,
       flaky_iso(r.started_ms) AS started,
       r.duration_us / 1000.0 AS duration_ms, r.exit_code, r.signal,
       r.revision, r.runner, r.tests, r.failures, r.seed, r.in_flight,
       r.loadavg, r.error, r.kind, r.incomplete, r.box
FROM runs r JOIN targets t ON t.id = r.target_id;

CREATE VIEW test_results AS
SELECT r.id AS run_id, tg.name AS target, t.name AS test,
       o.name AS outcome, res.position, res.duration_us / 1000.0 AS duration_ms,
       res.signature, res.message,
       flaky_iso(r.started_ms) AS started, r.revision, r.kind, r.incomplete,
       r.box
FROM results res
JOIN runs r ON r.id = res.run_id
JOIN tests t ON t.id = res.test_id
JOIN targets tg ON tg.id = t.target_id
JOIN outcomes o ON o.code = res.outcome;

CREATE VIEW test_stats AS
SELECT tg.name AS target, t.name AS test, sum(ru.runs) AS runs,
       sum(ru.failures) AS failures, sum(ru.skips) AS skips,
       CASE WHEN sum(ru.runs) > 0
            THEN 1.0 * sum(ru.failures) / sum(ru.runs) END AS fail_rate,
       CASE WHEN sum(ru.runs) = 0 THEN 'none'
            WHEN sum(ru.failures) = 0 THEN 'stable'
            WHEN sum(ru.failures) = sum(ru.runs) THEN 'broken'
            WHEN 1.0 * sum(ru.failures) / sum(ru.runs) > 0.20 THEN 'critical'
            WHEN 1.0 * sum(ru.failures) / sum(ru.runs) >= 0.05 THEN 'warning'
            ELSE 'noise' END AS tier,
       flaky_day(min(ru.day)) AS first_day,
       flaky_day(max(ru.day)) AS last_day
FROM rollups ru
JOIN tests t ON t.id = ru.test_id
JOIN targets tg ON tg.id = t.target_id
GROUP BY ru.test_id, tg.name, t.name;

CREATE VIEW flaky_tests AS
SELECT * FROM test_stats
WHERE failures > 0 AND failures < runs
ORDER BY fail_rate DESC;

CREATE VIEW daily_trend AS
SELECT tg.name AS target, t.name AS test, flaky_day(ru.day) AS day,
       ru.runs, ru.failures, ru.skips,
       CASE WHEN ru.runs > 0 THEN 1.0 * ru.failures / ru.runs END
           AS fail_rate
FROM rollups ru
JOIN tests t ON t.id = ru.test_id
JOIN targets tg ON tg.id = t.target_id;

-- SQLite takes the signature of any one row of the group: here the least.
CREATE VIEW failure_messages AS
SELECT tg.name AS target, t.name AS test, m.normalized,
       min(res.signature) AS signature, count(*) AS count
FROM results res
JOIN tests t ON t.id = res.test_id
JOIN targets tg ON tg.id = t.target_id
LEFT JOIN messages m ON m.id = res.message_id
WHERE res.outcome IN (1, 2)
GROUP BY res.test_id, res.message_id, tg.name, t.name, m.normalized
ORDER BY count DESC;

CREATE VIEW quarantined_tests AS
SELECT tg.name AS target, t.name AS test, q.reason, q.ticket,
       flaky_iso_s(q.added_ms) AS added
FROM quarantine q
JOIN tests t ON t.id = q.test_id
JOIN targets tg ON tg.id = t.target_id;

CREATE VIEW daily_budget AS
SELECT tg.name AS target, t.name AS test, flaky_day(b.day) AS day,
       sum(b.runs) AS failed_runs,
       sum(b.wall_us) / 1e6 AS wall_s, sum(b.cpu_us) / 1e6 AS cpu_s
FROM (SELECT day, test_id, runs, wall_us, cpu_us FROM budget
      UNION ALL
      SELECT (r.started_ms / 86400000)::integer, res.test_id, 1,
             coalesce(r.duration_us, 0),
             coalesce(r.user_us, 0) + coalesce(r.sys_us, 0)
      FROM results res JOIN runs r ON r.id = res.run_id
      WHERE res.outcome IN (1, 2)) b
JOIN tests t ON t.id = b.test_id
JOIN targets tg ON tg.id = t.target_id
GROUP BY b.test_id, b.day, tg.name, t.name;

CREATE VIEW alone_stats AS
SELECT tg.name AS target, t.name AS test,
       count(*) FILTER (WHERE res.outcome IN (0, 1, 2, 5)) AS runs_alone,
       count(*) FILTER (WHERE res.outcome IN (1, 2)) AS failures_alone,
       flaky_iso(max(r.started_ms)) AS last_alone
FROM runs r
JOIN results res ON res.run_id = r.id
JOIN tests t ON t.id = res.test_id
JOIN targets tg ON tg.id = t.target_id
WHERE r.kind = 'alone' AND r.incomplete IS NULL
GROUP BY res.test_id, tg.name, t.name;

CREATE VIEW static_risks AS
SELECT tg.name AS target, t.name AS test, f.path, f.line, f.category,
       f.tolerance, f.seeded, f.source, flaky_iso(f.scanned_ms) AS scanned
FROM scan_findings f
JOIN targets tg ON tg.id = f.target_id
JOIN tests t ON t.target_id = f.target_id
 AND (t.name = f.pytest_id OR t.name = f.unittest_id
      OR (substr(t.name, 1, length(f.pytest_id) + 1) = f.pytest_id || '['));

CREATE VIEW run_output AS
SELECT r.id AS run_id,
       convert_from(sqlar_uncompress(o.data, o.size), 'UTF8') AS stdout,
       convert_from(sqlar_uncompress(e.data, e.size), 'UTF8') AS stderr
FROM runs r
LEFT JOIN outputs o ON o.id = r.stdout_id
LEFT JOIN outputs e ON e.id = r.stderr_id;
