-- Shipping's cost on the server (docs/performance.md, fleet).
--
-- A box that ships a batch sums its results' rollups itself and sends the
-- sums (lib/fleet/ship_rollup.c): the trigger, which would group the
-- batch's 50,000 results again, does not run for the COPY of a batch
-- whose transaction says so. Any other insert, flakyctl's or an ad-hoc
-- one, is summed by the trigger as before.
DROP TRIGGER results_rollup ON results;
CREATE TRIGGER results_rollup AFTER INSERT ON results
	REFERENCING NEW TABLE AS new_results
	FOR EACH STATEMENT
	WHEN (current_setting('flaky.rollups', true) IS DISTINCT FROM 'sent')
	EXECUTE FUNCTION flaky_rollup_results();

-- The trigger's grouping by hashing, in memory, without JIT. For a large
-- insert the planner, estimating a few hundred rows from the join of a
-- transition table, sorted them instead (to disk, under the default
-- work_mem of 4MB), which took most of the trigger's time. With sorting
-- priced out, the plan's cost is past jit_above_cost, and compiling it
-- took a second per call: no JIT. The sorts that the trigger's ORDER BY
-- asks for stay, as nothing else gives their order.
ALTER FUNCTION flaky_rollup_results() SET work_mem = '64MB';
ALTER FUNCTION flaky_rollup_results() SET enable_sort = off;
ALTER FUNCTION flaky_rollup_results() SET jit = off;
