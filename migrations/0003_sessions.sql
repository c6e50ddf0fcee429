-- Saved comparison sessions and portable runs.

-- One row per database: its random machine id (stamped on exported files so
-- an importing studio can say where runs came from).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('machine_id', lower(hex(randomblob(16))));

-- Every run gets a globally unique id that travels with it in session files,
-- so importing the same file twice does not duplicate runs.
ALTER TABLE runs ADD COLUMN uid TEXT;
UPDATE runs SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
CREATE UNIQUE INDEX runs_uid ON runs(uid);
-- Where an imported run was measured (JSON: machine_id, hostname,
-- source_run_id, imported_unix_ms, file); NULL for runs measured here.
ALTER TABLE runs ADD COLUMN origin_json TEXT;
-- The price row an imported run's cost was computed with.
ALTER TABLE runs ADD COLUMN price_json TEXT;

CREATE TABLE sessions (
    id               INTEGER PRIMARY KEY,
    uid              TEXT NOT NULL UNIQUE,
    name             TEXT NOT NULL UNIQUE,
    baseline_run_id  INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    settings_json    TEXT NOT NULL,
    created_unix_ms  INTEGER NOT NULL,
    updated_unix_ms  INTEGER NOT NULL,
    -- For an imported session: the machine it came from, in words.
    imported_from    TEXT
);

CREATE TABLE session_runs (
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    PRIMARY KEY (session_id, run_id)
) WITHOUT ROWID;
CREATE INDEX session_runs_run ON session_runs(run_id);
