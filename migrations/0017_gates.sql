-- A performance gate (`trainbench gate`): its runs are the sweep's (the
-- baseline's and the candidate's, interleaved); its verdict is kept beside
-- the sweep, written once when the gate ends: `pass`, `fail`, `undecided`,
-- or `error` when a side could not run (then no ratio). The ratio is the
-- candidate's time per sample over the baseline's (1.05: 5 % slower).
CREATE TABLE gates (
    sweep_id         INTEGER PRIMARY KEY REFERENCES sweeps(id) ON DELETE CASCADE,
    baseline         TEXT NOT NULL,
    candidate        TEXT NOT NULL,
    max_slowdown     REAL NOT NULL,
    verdict          TEXT NOT NULL CHECK (verdict IN ('pass', 'fail', 'undecided', 'error')),
    exit_code        INTEGER NOT NULL,
    ratio            REAL,
    ci95_low         REAL,
    ci95_high        REAL,
    baseline_runs    INTEGER NOT NULL,
    candidate_runs   INTEGER NOT NULL,
    runs_to_decide   INTEGER,
    message          TEXT NOT NULL,
    outcome_json     TEXT,
    ended_unix_ms    INTEGER NOT NULL
);

-- q_sweeps names a gate's sweep as such.
DROP VIEW q_sweeps;
CREATE VIEW q_sweeps AS
SELECT
    w.id                 AS sweep_id,
    w.created_unix_ms    AS created_unix_ms,
    w.command            AS command,
    CASE
        WHEN EXISTS (SELECT 1 FROM tunes t WHERE t.sweep_id = w.id) THEN 'tune'
        WHEN EXISTS (SELECT 1 FROM bisections b WHERE b.sweep_id = w.id) THEN 'bisect'
        WHEN EXISTS (SELECT 1 FROM gates g WHERE g.sweep_id = w.id) THEN 'gate'
        ELSE 'run'
    END                  AS kind,
    w.configurations     AS configurations,
    w.repeats            AS repeats,
    (SELECT COUNT(*) FROM runs r WHERE r.sweep_id = w.id) AS runs,
    (SELECT COUNT(*) FROM runs r WHERE r.sweep_id = w.id AND r.status = 'completed') AS completed_runs
FROM sweeps w;

-- One row per gate: its verdict, ratio and interval (docs/query.md).
CREATE VIEW q_gates AS
SELECT
    sweep_id, ended_unix_ms, baseline, candidate, max_slowdown, verdict,
    exit_code, ratio, ci95_low, ci95_high, baseline_runs, candidate_runs,
    runs_to_decide, message
FROM gates;
