-- Shipping's cost on the server (docs/performance.md, fleet).
--
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
