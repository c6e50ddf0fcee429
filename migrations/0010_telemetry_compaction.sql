-- Long runs keep at most 20,000 telemetry samples per source: after the
-- run's summary has been computed from every sample, the rest are averaged
-- into time buckets (crates/core/src/downsample.rs). How many samples the
-- run had before, so every view can say its telemetry was averaged; NULL
-- when nothing was.
ALTER TABLE runs ADD COLUMN telemetry_raw_samples INTEGER CHECK (telemetry_raw_samples IS NULL OR telemetry_raw_samples >= 0);
