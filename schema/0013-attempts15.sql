-- Shipping polluters to a fleet's server (docs/fleet.md, "What ships").
--
-- A polluter (flakyctl polluter, 0007-polluters.sql) is a finding about
-- a test, not part of a run: it is queued here when it is made or made
-- again, by the triggers below, in the transaction that writes it, and
-- rides with the next batch of runs flakyd's shipper sends. The server
-- keeps the newest finding per test, whichever box made it. Queued by
-- seq, not by test: a finding made again while the older one is on its
-- way is queued again, and taking the shipped rows off by seq cannot drop
-- it. Written to run again over its own result.

CREATE TABLE IF NOT EXISTS ship_polluters (
	seq		INTEGER PRIMARY KEY AUTOINCREMENT,
	test_id		INTEGER NOT NULL	-- polluters(test_id)
);

-- What was found before this migration ships too.
INSERT INTO ship_polluters (test_id)
SELECT test_id FROM polluters
WHERE test_id NOT IN (SELECT test_id FROM ship_polluters) ORDER BY made_ms;

CREATE TRIGGER IF NOT EXISTS ship_polluter_made AFTER INSERT ON polluters
BEGIN
	INSERT INTO ship_polluters (test_id) VALUES (NEW.test_id);
END;

CREATE TRIGGER IF NOT EXISTS ship_polluter_remade AFTER UPDATE ON polluters
BEGIN
	INSERT INTO ship_polluters (test_id) VALUES (NEW.test_id);
END;
