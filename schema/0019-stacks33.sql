-- Where a hung run was stuck (issue 33; docs/schema.md, docs/triage.md).
--
-- Before a run is killed at its time limit, flaky asks each process of
-- its group for its stacks (lib/run/stacks*.c) and folds them into where
-- the test waited (lib/diagnose/hang.c): a row of run_stacks per such run,
-- linked to the test that was running (its TIMEOUT failure), and a row of
-- stack_dumps per process, its text compressed as outputs are (sqlar's
-- format: sqlar_uncompress(data, size) reads it, in the view stack_text).
-- prune deletes stack_dumps with a run's raw data; run_stacks stays, as
-- small as a result.
CREATE TABLE IF NOT EXISTS run_stacks (
	run_id		INTEGER PRIMARY KEY,	-- runs(id)
	test_id		INTEGER,		-- tests(id); NULL: none known
	capture_ms	INTEGER NOT NULL,	-- what taking them cost
	bound_ms	INTEGER NOT NULL,
	processes	INTEGER NOT NULL,	-- in the run's group
	taken		INTEGER NOT NULL,	-- of them with stacks
	kind		TEXT,			-- deadlock, blocked, busy, idle
	func		TEXT,			-- the innermost frame of the
	file		TEXT,			-- test's own code
	line		INTEGER,
	call		TEXT,			-- the call it waited in
	code		TEXT,			-- the source line at file:line
	site		TEXT,			-- func@file: runs grouped by it
	deadlock	TEXT,			-- the cycle in words
	frames		TEXT,			-- the hung thread, innermost
						-- first, "> " its own code
	thread		TEXT,
	note		TEXT			-- what the bounds cut
);
CREATE INDEX IF NOT EXISTS run_stacks_by_test ON run_stacks(test_id)
WHERE test_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS stack_dumps (
	id		INTEGER PRIMARY KEY,
	run_id		INTEGER NOT NULL,	-- runs(id)
	pid		INTEGER NOT NULL,
	ppid		INTEGER,
	runtime		TEXT NOT NULL,		-- python, node, go, java,
						-- native
	tool		TEXT,			-- faulthandler, inspector,
						-- sigquit, gdb, eu-stack, ...
	command		TEXT,			-- its command line, cut
	ms		INTEGER NOT NULL,
	note		TEXT,			-- why none, what was cut
	size		INTEGER NOT NULL,	-- bytes of the text
	data		BLOB			-- deflate, or raw: length = size
);
CREATE INDEX IF NOT EXISTS stack_dumps_by_run ON stack_dumps(run_id);

DROP VIEW IF EXISTS stack_text;
CREATE VIEW stack_text AS
SELECT d.run_id, d.pid, d.ppid, d.runtime, d.tool, d.command, d.ms, d.note,
       CAST(sqlar_uncompress(d.data, d.size) AS TEXT) AS stacks
FROM stack_dumps d;

DROP VIEW IF EXISTS hangs;
CREATE VIEW hangs AS
SELECT h.run_id, tg.name AS target, t.name AS test,
       strftime('%Y-%m-%dT%H:%M:%fZ', r.started_ms / 1000.0, 'unixepoch')
           AS started,
       r.revision, h.kind, h.func, h.file, h.line, h.call, h.code,
       h.deadlock, h.capture_ms, h.processes, h.taken
FROM run_stacks h
JOIN runs r ON r.id = h.run_id
JOIN targets tg ON tg.id = r.target_id
LEFT JOIN tests t ON t.id = h.test_id;
