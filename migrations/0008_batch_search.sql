-- The largest batch that fits (issue 17, `--batch-size max`): every probe of
-- a sweep's batch searches (a short run in a fresh worker process, kept out
-- of `runs` so that its few steps never count as a measurement), and on each
-- run the search its batch came from.
CREATE TABLE batch_probes (
    id INTEGER PRIMARY KEY,
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
    -- The configuration searched, batch left out ("… bmax").
    search TEXT NOT NULL,
    batch_size INTEGER NOT NULL CHECK (batch_size >= 1),
    outcome TEXT NOT NULL CHECK (outcome IN ('fits', 'out_of_memory', 'over_limit', 'failed')),
    peak_memory_bytes INTEGER,
    peak_memory_source TEXT,
    seconds REAL NOT NULL,
    reason TEXT,
    -- The resident-memory limit the probe ran under (NULL: none).
    memory_limit_bytes INTEGER,
    created_unix_ms INTEGER NOT NULL
);
CREATE INDEX batch_probes_by_search ON batch_probes (sweep_id, search);
-- NULL: the batch was given, not searched.
ALTER TABLE runs ADD COLUMN batch_search TEXT;
