-- Schema version 4: the same constraints, cheaper to check.
--
-- SQLite checks "x IN ('a', 'b', 'c')" with a temporary b-tree that it
-- builds each time a statement runs: for runs.status that was a third of
-- the instructions of storing a run. A chain of comparisons accepts and
-- refuses exactly the same values without one.
--
-- Only the text of the constraint changes, so the tables are edited in
-- place as SQLite documents for such changes ("ALTER TABLE", section 7:
-- writable_schema), not copied: a database of any size migrates at once.
-- Where the old text is not found the constraint stays as it was, which is
-- still correct. The program then bumps schema_version (SQLite's procedure),
-- so that every connection, this one too, rereads the schema.

PRAGMA writable_schema = ON;

UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN' || char(10) || char(9, 9, 9) ||
    '    (''running'', ''done'', ''timeout'', ''error'',' || char(10) ||
    char(9, 9, 9) || '     ''interrupted'', ''skipped''))',
    'CHECK (status = ''running'' OR status = ''done'' OR' || char(10) ||
    char(9, 9, 9) || '    status = ''timeout'' OR status = ''error'' OR' ||
    char(10) || char(9, 9, 9) ||
    '    status = ''interrupted'' OR status = ''skipped'')')
WHERE type = 'table' AND name = 'runs';

UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (category IN (''comparison'',' || char(10) || char(9, 9, 9) ||
    '    ''unittest'', ''torch'', ''numpy'', ''approx''))',
    'CHECK (category = ''comparison'' OR' || char(10) || char(9, 9, 9) ||
    '    category = ''unittest'' OR category = ''torch'' OR' || char(10) ||
    char(9, 9, 9) || '    category = ''numpy'' OR category = ''approx'')')
WHERE type = 'table' AND name = 'scan_findings';

PRAGMA writable_schema = OFF;
