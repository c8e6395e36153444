-- The rerun budget of every run (docs/history.md): budget held the pruned
-- runs' share only, and the rest was read from the failed results of the
-- window and joined to its runs at each report; now each run adds its
-- share when it is stored (lib/store/write.c, ingest.c: one statement
-- for a run that has failures, none for one that has not), and prune no
-- longer moves anything. A 30-day report read 153,900 failed results and
-- 27,000 runs for it; now a few thousand budget rows.
--
-- The runs stored before this migration: their share is added to what
-- prune had moved (the days of the two never overlap by run, and a
-- day's rows add up).
INSERT INTO budget (day, test_id, runs, wall_us, cpu_us)
SELECT r.started_ms / 86400000, res.test_id, count(*),
       sum(coalesce(r.duration_us, 0)),
       sum(coalesce(r.user_us, 0) + coalesce(r.sys_us, 0))
FROM results res JOIN runs r ON r.id = res.run_id
WHERE res.outcome IN (1, 2)
GROUP BY 1, 2
ON CONFLICT (day, test_id) DO UPDATE SET
    runs = runs + excluded.runs,
    wall_us = wall_us + excluded.wall_us,
    cpu_us = cpu_us + excluded.cpu_us;

-- The budget is whole in its table: the view no longer adds the results.
DROP VIEW daily_budget;
CREATE VIEW daily_budget AS
SELECT tg.name AS target, t.name AS test,
       date(b.day * 86400, 'unixepoch') AS day, b.runs AS failed_runs,
       b.wall_us / 1e6 AS wall_s, b.cpu_us / 1e6 AS cpu_s
FROM budget b
JOIN tests t ON t.id = b.test_id
JOIN targets tg ON tg.id = t.target_id;
