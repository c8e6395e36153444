-- Shipping finished runs to a fleet's PostgreSQL server (docs/fleet.md).
--
-- The outbox is this database itself: every run that leaves 'running'
-- (or is written whole, as ingest and skipped triggers do) is queued by
-- a trigger, in the transaction that finishes it, so no writer has to
-- know about shipping and no finished run can be missed. Run ids are not
-- a usable high-water mark: with jobs: 2 a long run started first ends
-- after a later one has shipped. flakyd's shipper reads the queue in seq
-- order, ships a batch in one server transaction, and only after the
-- server's commit deletes those rows and advances shipped_seq here. A
-- crash in between ships them again; the server inserts nothing twice
-- (its runs are unique by box and local id). Written to run again over
-- its own result (a database marked older, as tests of migrations do).

CREATE TABLE IF NOT EXISTS ship_queue (
	seq		INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id		INTEGER NOT NULL	-- runs(id); pruned: skipped
);

-- key: shipped_seq (the high-water mark), shipped_runs (how many),
-- box_id (this database's claim on its box name: random, made by the
-- first shipper, not here: new databases are copies of one image made by
-- these migrations at build time, and would all share it).
CREATE TABLE IF NOT EXISTS ship_state (
	key		TEXT PRIMARY KEY,
	value					-- no affinity: numbers and text as given
) WITHOUT ROWID;

INSERT OR IGNORE INTO ship_state (key, value) VALUES
	('shipped_seq', 0), ('shipped_runs', 0);

-- What was finished before this migration ships too, oldest first.
INSERT INTO ship_queue (run_id)
SELECT id FROM runs WHERE status != 'running'
AND id NOT IN (SELECT run_id FROM ship_queue) ORDER BY id;

CREATE TRIGGER IF NOT EXISTS ship_run_ended AFTER UPDATE OF status ON runs
WHEN OLD.status = 'running' AND NEW.status != 'running'
BEGIN
	INSERT INTO ship_queue (run_id) VALUES (NEW.id);
END;

CREATE TRIGGER IF NOT EXISTS ship_run_whole AFTER INSERT ON runs
WHEN NEW.status != 'running'
BEGIN
	INSERT INTO ship_queue (run_id) VALUES (NEW.id);
END;
