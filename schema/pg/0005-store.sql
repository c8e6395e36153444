-- The store on PostgreSQL (docs/fleet.md): flakyctl's commands read and
-- write the server directly, with the SQL they speak to SQLite (lib/store
-- sql.h); what they need beyond the tables is here.
--
-- A result's started_ms (the partition key) is its run's start. The
-- shipper names it; the store's INSERTs, written for SQLite's results,
-- do not, and set flaky.started_ms in their transaction instead.
ALTER TABLE results ALTER COLUMN started_ms
	SET DEFAULT current_setting('flaky.started_ms', true)::bigint;

-- SQLite's json_each over a JSON array of integers (test ids): the store
-- passes a set of ids as one parameter.
CREATE FUNCTION flaky_json_each(ids text) RETURNS TABLE (value bigint)
LANGUAGE sql IMMUTABLE AS $$
	SELECT e::bigint FROM json_array_elements_text(ids::json) e
$$;

-- SQLite counts with sum(condition): a condition is 1 or 0 there. The
-- same sum over booleans here (NULL for no rows, like SQLite's sum).
CREATE FUNCTION flaky_sum_bool(s bigint, b boolean) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN b IS NULL THEN s ELSE coalesce(s, 0) + b::integer END
$$;
CREATE AGGREGATE sum(boolean) (SFUNC = flaky_sum_bool, STYPE = bigint);

-- SQLite's max(a, b) and min(a, b) of two values.
CREATE FUNCTION max(a numeric, b numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$ SELECT greatest(a, b) $$;
CREATE FUNCTION min(a numeric, b numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$ SELECT least(a, b) $$;
