-- What boxes ship (lib/fleet/ship.c, docs/fleet.md).
--
-- boxes: each box name is claimed by one box, known by its claim (the
-- machine's id and the random id of its local database). A second box
-- configured with the same name would mix two boxes' local ids under one
-- name, and (box, local_id) is what makes shipping idempotent: its runs
-- would be taken for runs already shipped and dropped. It is refused
-- instead; a name is given up by deleting its row.
CREATE TABLE boxes (
	name		text PRIMARY KEY,
	claim		text NOT NULL,
	first_ms	bigint NOT NULL,	-- first claimed
	last_ms		bigint NOT NULL		-- last connected
);
