-- What a person's own training loop may leave out: a timing window's
-- learning rate (`trainbench.step` takes one only when the loop passes it)
-- and an evaluation's held-out loss (`trainbench.evaluate(accuracy=…)`).
-- SQLite cannot drop a NOT NULL constraint in place, so both tables are
-- rebuilt with every row kept.
CREATE TABLE windows_new (
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    first_step INTEGER NOT NULL,
    steps      INTEGER NOT NULL,
    samples    INTEGER NOT NULL,
    start_ns   INTEGER NOT NULL,
    end_ns     INTEGER NOT NULL,
    loss_mean  REAL NOT NULL,
    lr         REAL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
INSERT INTO windows_new (run_id, idx, first_step, steps, samples, start_ns, end_ns, loss_mean, lr)
    SELECT run_id, idx, first_step, steps, samples, start_ns, end_ns, loss_mean, lr FROM windows;
DROP TABLE windows;
ALTER TABLE windows_new RENAME TO windows;

-- Likewise an evaluation's held-out loss: a training script may report an
-- accuracy alone (`trainbench.evaluate(accuracy=…)`).
CREATE TABLE evals_new (
    run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step      INTEGER NOT NULL,
    epoch     REAL NOT NULL,
    elapsed_s REAL NOT NULL,
    accuracy  REAL NOT NULL,
    loss      REAL,
    samples   INTEGER NOT NULL,
    t_ns      INTEGER NOT NULL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
INSERT INTO evals_new (run_id, step, epoch, elapsed_s, accuracy, loss, samples, t_ns)
    SELECT run_id, step, epoch, elapsed_s, accuracy, loss, samples, t_ns FROM evals;
DROP TABLE evals;
ALTER TABLE evals_new RENAME TO evals;
