-- Schema version 3: findings of the static scan (flakyctl scan --store,
-- flakyd's scan: true), joined to tests at query time so that tests run
-- after the scan link too.

CREATE TABLE scan_findings (
	id		INTEGER PRIMARY KEY,
	target_id	INTEGER NOT NULL REFERENCES targets(id),
	scanned_ms	INTEGER NOT NULL,
	path		TEXT NOT NULL,		-- relative to the target's dir
	line		INTEGER NOT NULL,
	category	TEXT NOT NULL CHECK (category IN ('comparison',
			    'unittest', 'torch', 'numpy', 'approx')),
	classes		TEXT,			-- "Outer.Inner", NULL: none
	function	TEXT,			-- innermost enclosing function
	test		TEXT,			-- nearest enclosing test function
	tolerance	TEXT,			-- "rtol=1e-6, atol=0"
	source		TEXT,
	seeded		INTEGER NOT NULL,	-- the test seeds its randomness
	pytest_id	TEXT,			-- path::Class::test
	unittest_id	TEXT			-- module.Class.test
);
CREATE INDEX scan_by_target ON scan_findings(target_id, pytest_id);

-- Findings beside the tests they are in: a pytest node id matches with or
-- without its parameters ("test_x[1]"), a unittest id exactly.
CREATE VIEW static_risks AS
SELECT tg.name AS target, t.name AS test, f.path, f.line, f.category,
       f.tolerance, f.seeded, f.source,
       strftime('%Y-%m-%dT%H:%M:%fZ', f.scanned_ms / 1000.0, 'unixepoch')
           AS scanned
FROM scan_findings f
JOIN targets tg ON tg.id = f.target_id
JOIN tests t ON t.target_id = f.target_id
 AND (t.name = f.pytest_id OR t.name = f.unittest_id
      OR (substr(t.name, 1, length(f.pytest_id) + 1) = f.pytest_id || '['));
