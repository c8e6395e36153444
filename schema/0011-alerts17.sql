-- Alerts (issue 17): a test's tier change told to the receivers of
-- notify: (docs/alerts.md), each event once.
--
-- CHECKs are chains of comparisons, not IN lists (0004-checks.sql says
-- why).
--
-- alerts: one row per event. The event's key is the test, its kind and
-- the time of the run that made the transition (at_ms): a run evaluated
-- twice adds nothing. run_id is that run; runs and failures are the
-- window the tier was judged on (passes and needed: a quarantined test's
-- passes in a row and the passes that release it).
CREATE TABLE IF NOT EXISTS alerts (
	id		INTEGER PRIMARY KEY,
	test_id		INTEGER NOT NULL REFERENCES tests(id),
	kind		TEXT NOT NULL CHECK (kind = 'flaky' OR
			    kind = 'critical' OR kind = 'broken' OR
			    kind = 'recovered' OR kind = 'release'),
	at_ms		INTEGER NOT NULL,
	run_id		INTEGER,
	tier		TEXT NOT NULL,
	runs		INTEGER NOT NULL,
	failures	INTEGER NOT NULL,
	passes		INTEGER,
	needed		INTEGER,
	created_ms	INTEGER NOT NULL,
	UNIQUE (test_id, kind, at_ms)
);
CREATE INDEX IF NOT EXISTS alerts_by_time ON alerts(created_ms);

-- One row per event and receiver (the receiver's name in notify:).
-- state: pending until the receiver took it (delivered) or it was given
-- up (failed); attempts and next_ms carry the backoff across restarts.
CREATE TABLE IF NOT EXISTS alert_deliveries (
	alert_id	INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
	receiver	TEXT NOT NULL,
	state		TEXT NOT NULL DEFAULT 'pending' CHECK (state =
			    'pending' OR state = 'delivered' OR
			    state = 'failed'),
	attempts	INTEGER NOT NULL DEFAULT 0,
	next_ms		INTEGER NOT NULL DEFAULT 0,
	last_error	TEXT,
	done_ms		INTEGER,
	PRIMARY KEY (alert_id, receiver)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS alert_deliveries_pending
	ON alert_deliveries(receiver, alert_id) WHERE state = 'pending';

-- Per target, the last run whose evidence was looked at for alerts:
-- runs stored after it are evaluated in order, also after a restart.
CREATE TABLE IF NOT EXISTS alert_cursor (
	target_id	INTEGER PRIMARY KEY REFERENCES targets(id),
	run_id		INTEGER NOT NULL
);
