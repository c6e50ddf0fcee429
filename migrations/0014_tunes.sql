-- A search for the best way to train a model (`trainbench tune`): its runs
-- are the sweep's; the search's trace (each candidate, the round it
-- reached, why it stopped, the winner and its ratio to the runner-up) is
-- kept as JSON beside the sweep, rewritten after every run so that a
-- search stopped part-way keeps what it found.
CREATE TABLE tunes (
    sweep_id       INTEGER PRIMARY KEY REFERENCES sweeps(id) ON DELETE CASCADE,
    model          TEXT NOT NULL,
    objective      TEXT NOT NULL,
    outcome_json   TEXT NOT NULL,
    updated_unix_ms INTEGER NOT NULL
);
