-- Runs on a remote host (issue 16): where the run's folder is on the host and
-- how far the studio has read its journal. Events and telemetry read up to
-- `journal_offset` are stored; a studio that lost the connection (or stopped)
-- re-attaches from there, so nothing is read twice or lost. A run with an
-- unfinished remote row is not "interrupted" when the studio restarts: it may
-- still be training on the host.
CREATE TABLE remote_runs (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    host TEXT NOT NULL,
    url TEXT NOT NULL,
    dir TEXT NOT NULL,
    journal_offset INTEGER NOT NULL DEFAULT 0 CHECK (journal_offset >= 0),
    finished INTEGER NOT NULL DEFAULT 0 CHECK (finished IN (0, 1)),
    -- The Slurm job the run's agent runs in, on a Slurm host (sbatch --parsable).
    slurm_job TEXT,
    created_unix_ms INTEGER NOT NULL
);
