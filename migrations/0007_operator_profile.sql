-- The operator profile (issue 15, `--profile`): the worker's `profile` event
-- (top operators and categories by self time over a few profiled steps after
-- the timed part), as JSON; NULL where the run did not ask for one.
ALTER TABLE runs ADD COLUMN profile_json TEXT;
