-- Outputs hold the content itself on the server (docs/fleet.md): the
-- server compresses them (TOAST), and the view run_output reads them with
-- no zlib. flakyctl's direct writes (--db postgresql://) before this
-- stored them deflated, as SQLite does, and the run page and
-- /api/v1/run/ID then failed. lib/fleet/inflate.c makes those rows whole
-- in this migration's transaction, before this runs; the CHECK then holds
-- every writer to it. length() of a bytea reads its header only.
ALTER TABLE outputs ADD CONSTRAINT outputs_raw CHECK (length(data) = size);
