-- The first step in parts: from the start of training (after model and data
-- set-up) to the end of step 1, and compilation alone where a framework
-- compiles ahead of the step and times it (JAX, a traced tf.function).
ALTER TABLE runs ADD COLUMN first_step_train_s REAL;
ALTER TABLE runs ADD COLUMN compile_s REAL;
