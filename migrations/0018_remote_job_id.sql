-- A remote run's job as its place knows it: a Slurm job id, a Ray job's
-- submission id (none for a run whose agent the studio started over ssh).
ALTER TABLE remote_runs RENAME COLUMN slurm_job TO place_job;
