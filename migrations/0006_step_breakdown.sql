-- Why one run beats another (issue 15).
-- The worker's step breakdown (its `breakdown` event: whole-step and
-- per-phase seconds of the extra steps after the timed part), as JSON.
ALTER TABLE runs ADD COLUMN step_timings_json TEXT;
-- Recompilations of the training step after step 1 as the framework counted
-- them (`done`'s `compiles`), as JSON; NULL where nothing was counted.
ALTER TABLE runs ADD COLUMN compiles_json TEXT;
