-- Seed sweeps and tolerance headroom (issue 34): the table and view of
-- schema/0020-seeds34.sql on the fleet's server (docs/fleet.md), for a
-- sweep written there with --db postgresql://. A box's flakyd does not
-- ship headroom rows (docs/fleet.md, "What ships"). Written to run again
-- over its own result, as the migrations before it.
CREATE TABLE IF NOT EXISTS headroom (
	test_id		bigint NOT NULL,
	path		text NOT NULL,
	line		integer NOT NULL,
	kind		text NOT NULL CHECK (kind IN ('tol', 'lt', 'le', 'gt',
			    'ge')),
	run_id		bigint NOT NULL,
	quantity	double precision NOT NULL,
	bound		double precision NOT NULL,
	calls		integer NOT NULL,
	abs_err		double precision,
	rel_err		double precision,
	tolerance	text,
	assertion	text,
	PRIMARY KEY (test_id, path, line, kind, run_id)
);
CREATE INDEX IF NOT EXISTS headroom_by_run ON headroom(run_id);

CREATE OR REPLACE VIEW headroom_runs AS
SELECT tg.name AS target, t.name AS test, h.path, h.line, h.kind,
       h.assertion, h.tolerance, h.quantity, h.bound, h.abs_err, h.rel_err,
       h.calls,
       CASE WHEN h.kind = 'tol' THEN h.quantity
            WHEN h.kind IN ('lt', 'le') AND h.bound > 0 AND h.quantity >= 0
                THEN h.quantity / h.bound
            WHEN h.kind IN ('gt', 'ge') AND h.bound > 0 AND h.quantity > 0
                THEN h.bound / h.quantity
       END AS used,
       CASE WHEN h.kind IN ('tol', 'le') THEN h.quantity > h.bound
            WHEN h.kind = 'lt' THEN h.quantity >= h.bound
            WHEN h.kind = 'gt' THEN h.quantity <= h.bound
            ELSE h.quantity < h.bound
       END::integer AS failed,
       ru.id AS run_id, ru.seed, ru.perturbation,
       flaky_iso(ru.started_ms) AS started
FROM headroom h
JOIN runs ru ON ru.id = h.run_id
JOIN tests t ON t.id = h.test_id
JOIN targets tg ON tg.id = t.target_id;
