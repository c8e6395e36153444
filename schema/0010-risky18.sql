-- Runs of only some tests (issue 18): analyze --until-settled reruns the
-- tests still open after its first whole runs, --risky the tests with
-- static scan findings, each selected through the runner's own options.
--
-- selected is how many tests the runner was asked to run (NULL: the whole
-- suite). Such a run stays of kind 'suite': its results count, in the
-- rollups and every rate, for the tests it ran, and only for them (a
-- test's rate counts the runs where it ran); a test it did not run is not
-- missing from it. What needs whole runs leaves these out: co-failure
-- clusters and order dependence (a test's neighbours were not run).

ALTER TABLE runs ADD COLUMN selected INTEGER;	-- NULL: the whole suite
