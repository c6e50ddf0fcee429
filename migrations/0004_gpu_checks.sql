-- What the GPU acceptance checks need from a run.
-- NVML's count of compute processes on a GPU that are not the run's: another
-- job on the GPU skews what the run measures.
ALTER TABLE telemetry ADD COLUMN other_processes INTEGER;
-- The dynamic loss scale when an amp-fp16 run finished (the worker's done
-- event); NULL where no loss scaling ran.
ALTER TABLE runs ADD COLUMN loss_scale REAL;
