//! The order of a sweep and the learning-rate schedule every worker uses.

/// Returns (configuration index, repeat index) pairs.
pub fn interleaved_plan(configurations: usize, repeats: usize) -> Vec<(usize, usize)> {
    (0..repeats)
        .flat_map(|r| (0..configurations).map(move |c| (c, r)))
        .collect()
}

/// The learning-rate schedule every worker uses: linear warm-up from 0 to the
/// peak over `warmup` steps, then cosine decay to 0 at `total` steps. Steps count
/// from 1; the value is the rate used by that step.
pub fn learning_rate(peak: f64, step: u64, warmup: u64, total: u64) -> f64 {
    if warmup > 0 && step <= warmup {
        return peak * step as f64 / warmup as f64;
    }
    let decay_steps = total.saturating_sub(warmup).max(1) as f64;
    let progress = (step.saturating_sub(warmup)) as f64 / decay_steps;
    0.5 * peak * (1.0 + (std::f64::consts::PI * progress.min(1.0)).cos())
}
