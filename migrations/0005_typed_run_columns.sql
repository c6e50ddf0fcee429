-- The run row's configuration as typed columns (framework environment, compile
-- mode, parallel mode) and the key of the scaling series it belongs to, so
-- that nothing reads a configuration back out of config_key.
--
-- The store fills them for existing runs right after this file, in the same
-- transaction (crates/store/src/runs.rs, fill_typed_columns): from the run's
-- spec when it still validates (and then rewrites config_key into the
-- canonical form, so old and new runs of one configuration group together),
-- else from the config_key it was stored with.
ALTER TABLE runs ADD COLUMN environment TEXT;
ALTER TABLE runs ADD COLUMN compile TEXT NOT NULL DEFAULT 'off';
ALTER TABLE runs ADD COLUMN parallel TEXT NOT NULL DEFAULT 'ddp';
ALTER TABLE runs ADD COLUMN scaling_key TEXT NOT NULL DEFAULT '';
