-- Runs perturbed on purpose (issue 18): stress beside the suite and
-- shuffled order.
--
-- perturbation names the stress a run had ('cpu:2', 'memory:1', 'io:1',
-- 'all:2'; NULL: calm), so that a test's rate can be given per
-- perturbation ("2% calm, 31% under CPU stress"). The seed a shuffled run
-- was given goes in the existing runs.seed (as a seed the runner printed
-- always did), so any run can be repeated in the same order.

ALTER TABLE runs ADD COLUMN perturbation TEXT;	-- NULL: calm
