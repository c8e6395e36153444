-- Seed sweeps and tolerance headroom (issue 34; docs/schema.md,
-- docs/runners.md "Seed sweeps", docs/triage.md "Tolerance headroom").
--
-- A run of a seed sweep has perturbation 'seed' and its seed in
-- runs.seed; a replay of a seed that failed (analyze reruns the tests
-- that failed with it, to tell a seed from randomness no seed controls)
-- has 'seed:replay' and is evidence only (runs.incomplete says why: it was
-- chosen because it failed, so it counts for no rate).
--
-- headroom: the margin of each approximate assertion a test made in a
-- seeded run, as flaky's seed hook measured it, the worst call per call
-- site. kind 'tol': quantity is the share of the tolerance used,
-- |actual - desired| / (atol + rtol |desired|) at its largest over the
-- elements (failing past 1, the bound); 'lt', 'le', 'gt', 'ge': the
-- assertion holds `quantity OP bound` (assert x > 0.9: quantity x, bound
-- 0.9).
CREATE TABLE IF NOT EXISTS headroom (
	test_id		INTEGER NOT NULL,	-- tests(id)
	path		TEXT NOT NULL,		-- relative to the target's dir
	line		INTEGER NOT NULL,
	kind		TEXT NOT NULL CHECK (kind = 'tol' OR kind = 'lt' OR
			    kind = 'le' OR kind = 'gt' OR kind = 'ge'),
	run_id		INTEGER NOT NULL,	-- runs(id)
	quantity	REAL NOT NULL,
	bound		REAL NOT NULL,
	calls		INTEGER NOT NULL,	-- at the site in the test's run
	abs_err		REAL,			-- tol: |actual - desired| there
	rel_err		REAL,			-- ... and / |desired|
	tolerance	TEXT,			-- 'rtol=1e-07, atol=0'
	assertion	TEXT,			-- assert_allclose, approx, ...
	PRIMARY KEY (test_id, path, line, kind, run_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS headroom_by_run ON headroom(run_id);

-- Each margin with its run and test, and the share of its bound it used:
-- the quantity for 'tol'; x / bound for x < bound and bound / x for
-- x > bound when both are positive (NULL otherwise); failed is 1 when
-- the assertion did not hold.
CREATE VIEW IF NOT EXISTS headroom_runs AS
SELECT tg.name AS target, t.name AS test, h.path, h.line, h.kind,
       h.assertion, h.tolerance, h.quantity, h.bound, h.abs_err, h.rel_err,
       h.calls,
       CASE WHEN h.kind = 'tol' THEN h.quantity
            WHEN (h.kind = 'lt' OR h.kind = 'le') AND h.bound > 0 AND
                 h.quantity >= 0
                THEN h.quantity / h.bound
            WHEN (h.kind = 'gt' OR h.kind = 'ge') AND h.bound > 0 AND
                 h.quantity > 0
                THEN h.bound / h.quantity
       END AS used,
       CASE WHEN h.kind = 'tol' OR h.kind = 'le' THEN h.quantity > h.bound
            WHEN h.kind = 'lt' THEN h.quantity >= h.bound
            WHEN h.kind = 'gt' THEN h.quantity <= h.bound
            ELSE h.quantity < h.bound
       END AS failed,
       ru.id AS run_id, ru.seed, ru.perturbation,
       strftime('%Y-%m-%dT%H:%M:%fZ', ru.started_ms / 1000.0, 'unixepoch')
           AS started
FROM headroom h
JOIN runs ru ON ru.id = h.run_id
JOIN tests t ON t.id = h.test_id
JOIN targets tg ON tg.id = t.target_id;
