-- The box a run ran on (issue 15): the build machine, so that a test's
-- rate can be given per box ("30% on box-a (9/30), 0% on box-b (0/30)")
-- and a test that fails on one box only is told as an infrastructure
-- flake. Every run written records it: the host name by default, or the
-- name given by box: in flakyd's YAML, --box or $FLAKY_BOX
-- (letters, digits, '.', '-', '_'; 1 to 64 bytes).
--
-- NULL: a run stored before boxes were recorded. Such a run ran where the
-- database was written, so readers count it as the reading box's own (the
-- local box: COALESCE(box, <local box>)).

ALTER TABLE runs ADD COLUMN box TEXT;	-- NULL: the local box, before 0009
