-- A copy of each model file a run trained (`--model PATH.py:FUNCTION`),
-- keyed by the SHA-256 the run stores in its spec (`model_sha256`): the
-- bytes the studio read when it planned the run, which the worker checked
-- before executing them. Kept so that a comparison can be read and
-- reproduced after the file changed or is gone; never executed from here.
CREATE TABLE model_files (
    sha256          TEXT PRIMARY KEY,
    reference       TEXT NOT NULL,
    bytes           BLOB NOT NULL,
    stored_unix_ms  INTEGER NOT NULL
);
