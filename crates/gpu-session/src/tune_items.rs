//! The session's searches: ViT-B/16 and GPT-2 small, each tuned for
//! throughput by the studio's own search (`trainbench tune`: successive
//! halving, losers stopped by their intervals, the winner confirmed against
//! the runner-up) within its item's allowance, then held against the best
//! single configuration measured before at the same model and precision
//! ([`super::best`]).
//!
//! The space is each installed framework of the session (PyTorch eager,
//! the libtorch worker, JAX) × two batches at the plan's precision.
//! torch.compile is left out: its 40–90 s start per probe on an H100 would
//! take a third of the allowance for one candidate, and the plan measures
//! it on its own (`vit-compile-max`). The rehearsal searches the same
//! frameworks with the small models at batches that train in seconds.

use serde::Serialize;

use super::kind::Kind;
use super::pace::Sizes;

/// The share of an item's allowance the search may start runs in; the
/// rest is for the run under way when it is spent (the item is stopped at
/// its allowance's end).
pub const BUDGET_SHARE: f64 = 0.8;

/// What one search covers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Space {
    pub model: String,
    pub image_size: Option<i64>,
    pub seq_len: Option<i64>,
    /// The frameworks searched: those of the session that are installed.
    pub frameworks: Vec<Kind>,
    pub compile: Vec<String>,
    pub precision: String,
    pub batch_size: Vec<i64>,
    /// A probe's steps and steps per timing window (later rounds run
    /// longer, as `tune` does).
    pub probe_steps: i64,
    pub window_steps: i64,
    /// Runs each of the winner and the runner-up in the confirmation.
    pub confirm_repeats: u32,
}

impl Space {
    fn new(s: &Sizes, model: &str, seq_len: Option<i64>, batches: &[i64]) -> Space {
        Space {
            model: model.into(),
            image_size: None,
            seq_len,
            frameworks: vec![Kind::Pytorch, Kind::Tch, Kind::Jax],
            compile: vec!["off".into()],
            precision: s.precision.into(),
            batch_size: batches.to_vec(),
            probe_steps: s.tune_probe.0,
            window_steps: s.tune_probe.1,
            confirm_repeats: 2,
        }
    }

    /// `b256 and b1024`.
    fn batch_words(&self) -> String {
        let b: Vec<String> = self.batch_size.iter().map(|b| format!("b{b}")).collect();
        b.join(" and ")
    }
}

/// The two searches: id, title, allowance in seconds (before the
/// session's scale), space.
pub(super) fn searches(s: &Sizes) -> Vec<(String, String, f64, Space)> {
    let vit = Space::new(s, s.vit, None, s.tune_vit_batches);
    let gpt2 = Space::new(s, s.gpt2, Some(s.gpt2_seq), s.tune_gpt2_batches);
    let title = |space: &Space, what: &str| {
        format!(
            "{what} {}: the fastest setup searched over PyTorch eager, the libtorch worker and JAX (those installed) at {}",
            space.precision,
            space.batch_words()
        )
    };
    vec![
        (
            "vit-tune".into(),
            title(&vit, s.vit),
            s.tune_allowance.0,
            vit,
        ),
        (
            "gpt2-tune".into(),
            title(&gpt2, &format!("{} seq {}", s.gpt2, s.gpt2_seq)),
            s.tune_allowance.1,
            gpt2,
        ),
    ]
}
