-- The epoch a run's cost per epoch is priced for, when the person gave one
-- (synthetic data has no size of its own). NULL: the data set's real size,
-- else the default stated with the figure (ImageNet-1k for an image model).
ALTER TABLE runs ADD COLUMN epoch_samples INTEGER CHECK (epoch_samples IS NULL OR epoch_samples > 0);

-- The two bundled AWS rows get the dates their prices were true (the prices
-- themselves are left alone: stored runs keep the costs they were given).
-- A row the person edited is theirs and is not touched.
UPDATE prices SET as_of = '2020-11',
    source = 'AWS on-demand list price (us-east-1) from the instance''s launch in November 2020; AWS announced cuts for P4 instances in June 2025, so check the current price'
    WHERE offering = 'AWS p4d.24xlarge on-demand' AND as_of = 'undated' AND edited_by_user = 0;
UPDATE prices SET as_of = '2023-07',
    source = 'AWS on-demand list price as reported in 2023; AWS announced cuts of up to 45% in June 2025, so check the current price'
    WHERE offering = 'AWS p5.48xlarge on-demand' AND as_of = '2023-07 list price' AND edited_by_user = 0;
