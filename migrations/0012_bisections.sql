-- A bisection over a framework's releases (`trainbench bisect`): its runs
-- are the sweep's; what it found (the first release where the metric
-- changed, with every measured release's values and interval) is kept as
-- JSON beside the sweep, written once when the search ends.
CREATE TABLE bisections (
    sweep_id      INTEGER PRIMARY KEY REFERENCES sweeps(id) ON DELETE CASCADE,
    framework     TEXT NOT NULL,
    good          TEXT NOT NULL,
    bad           TEXT NOT NULL,
    metric        TEXT NOT NULL,
    outcome_json  TEXT NOT NULL,
    ended_unix_ms INTEGER NOT NULL
);
