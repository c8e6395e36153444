-- The smallest polluter of an order-dependent test (flakyctl polluter,
-- issue 19): the tests that, run before it in this order, make it fail,
-- as delta debugging narrowed them from a stored failing run, confirmed by
-- reruns. One row per victim, the newest search; triage and ticket show
-- it with the command that reproduces the failure.
--
-- members holds the runner's test ids, one a line, in the order they run
-- (the victim last is not among them). The reruns themselves are not runs
-- of the suite or alone: they are not stored as runs.

CREATE TABLE IF NOT EXISTS polluters (
	test_id		INTEGER PRIMARY KEY REFERENCES tests(id),
	from_run_id	INTEGER,		-- the failing run narrowed
	candidates	INTEGER NOT NULL,	-- tests before the victim there
	members		TEXT NOT NULL,		-- test ids, one a line, in order
	reruns		INTEGER NOT NULL,	-- runs the search took
	minimal		INTEGER NOT NULL CHECK (minimal IN (0, 1)),
	command		TEXT NOT NULL,		-- reproduces the failure
	made_ms		INTEGER NOT NULL
);
