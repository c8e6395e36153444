-- Schema version 6: stored output compressed, each distinct stream once.
--
-- Output was most of the database (issue 12: 285 bytes per result on
-- click's suite, against about 20 for the result itself). Each stream, as
-- kept and redacted, is now a row of outputs: deflate-compressed in the
-- format of SQLite's sqlar (zlib's compress(); kept raw where that is not
-- smaller, then length(data) = size), once per distinct content, and runs
-- name it by id. The stock sqlite3 shell has sqlar_uncompress(data, size)
-- built in, and flaky registers the same function on its own connections,
-- so the view run_output reads as text in both (docs/schema.md).
--
-- The program registers sqlar_compress and flaky_output_hash before it
-- migrates (lib/store_output.c), so existing output moves here in SQL,
-- compressed like new output. The hash is 64 bits of the content: a
-- collision here would make two runs name one output, about once in 10^8
-- databases of a million distinct outputs; flaky's own writes compare the
-- content on a hit instead, and store a colliding one with hash NULL.
--
-- No REFERENCES on stdout_id and stderr_id: a foreign key would make each
-- output deleted by prune scan runs (nothing indexes them by output), and
-- only the store writes them. prune deletes outputs no run names.

CREATE TABLE outputs (
	id		INTEGER PRIMARY KEY,
	hash		INTEGER UNIQUE,		-- 64-bit, of the content
	size		INTEGER NOT NULL,	-- bytes of the content
	data		BLOB NOT NULL		-- deflate, or raw: length = size
);

ALTER TABLE runs ADD COLUMN stdout_id INTEGER;	-- outputs(id)
ALTER TABLE runs ADD COLUMN stderr_id INTEGER;

INSERT OR IGNORE INTO outputs (hash, size, data)
SELECT flaky_output_hash(x), length(x), sqlar_compress(x)
FROM (SELECT CAST(stdout AS BLOB) AS x FROM runs WHERE stdout IS NOT NULL
      UNION
      SELECT CAST(stderr AS BLOB) FROM runs WHERE stderr IS NOT NULL);

UPDATE runs SET
    stdout_id = (SELECT id FROM outputs
                 WHERE hash = flaky_output_hash(CAST(runs.stdout AS BLOB))),
    stderr_id = (SELECT id FROM outputs
                 WHERE hash = flaky_output_hash(CAST(runs.stderr AS BLOB)))
WHERE stdout IS NOT NULL OR stderr IS NOT NULL;

ALTER TABLE runs DROP COLUMN stdout;
ALTER TABLE runs DROP COLUMN stderr;

-- A run's kept output as text (NULL: none kept). sqlar_uncompress returns
-- a blob; CAST makes it text as it was stored (UTF-8 as the runner wrote
-- it, redacted).
CREATE VIEW run_output AS
SELECT r.id AS run_id,
       CAST(sqlar_uncompress(o.data, o.size) AS TEXT) AS stdout,
       CAST(sqlar_uncompress(e.data, e.size) AS TEXT) AS stderr
FROM runs r
LEFT JOIN outputs o ON o.id = r.stdout_id
LEFT JOIN outputs e ON e.id = r.stderr_id;
