//! A run's figures while it trains, from its events as they arrive: steps
//! done of the total, the last window's throughput and the steady throughput
//! so far (the summary's warm-up rule over the windows seen). The CLI's
//! progress bar and the desktop app's live view both read them from here, so
//! they cannot count differently.

use trainbench_core::protocol::Event;
use trainbench_core::stats::{steady_throughput, WindowTiming};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Optimizer steps finished (`Event::steps_finished`).
    pub step: u64,
    /// From `hello`; `None` before it.
    pub total_steps: Option<u64>,
    /// The last window's throughput, samples/s.
    pub current_samples_per_s: Option<f64>,
    /// Median of the windows after warm-up so far, samples/s.
    pub steady_samples_per_s: Option<f64>,
    windows: Vec<WindowTiming>,
}

impl Figures {
    /// Takes one event into account.
    pub fn observe(&mut self, event: &Event) {
        if let Some(step) = event.steps_finished() {
            self.step = step;
        }
        if let Event::Hello { total_steps, .. } = event {
            self.total_steps = Some(*total_steps);
        }
        if let Some(w) = event.window_timing() {
            self.windows.push(w);
            let tp = w.throughput();
            self.current_samples_per_s = tp.is_finite().then_some(tp);
            self.steady_samples_per_s =
                steady_throughput(&self.windows).map(|s| s.median_samples_per_s);
        }
    }

    /// Steps still to go, when the total is known.
    pub fn steps_left(&self) -> Option<u64> {
        self.total_steps.map(|t| t.saturating_sub(self.step))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(index: u64, first_step: u64, steps: u64, secs: f64) -> Event {
        let start = 1_000_000_000 * (index + 1);
        Event::Window {
            index,
            first_step,
            steps,
            samples: steps * 10,
            start_ns: start,
            end_ns: start + (secs * 1e9) as u64,
            loss_mean: 1.0,
            lr: Some(1e-3),
        }
    }

    #[test]
    fn steps_and_throughput_follow_the_events() {
        let mut f = Figures::default();
        f.observe(&Event::FirstStep {
            since_process_start_s: Some(1.0),
            since_train_start_s: 0.5,
            compile_s: None,
            t_ns: 1,
        });
        assert_eq!((f.step, f.steps_left()), (1, None));
        // Steps 2..=6 in 0.5 s: 50 samples → 100 samples/s.
        f.observe(&window(0, 2, 5, 0.5));
        assert_eq!(f.step, 6);
        assert_eq!(f.current_samples_per_s, Some(100.0));
        f.observe(&window(1, 7, 5, 0.25));
        assert_eq!(f.step, 11);
        assert_eq!(f.current_samples_per_s, Some(200.0));
        assert!(f.steady_samples_per_s.is_some());
        f.observe(&Event::Done {
            steps: 11,
            samples: 110,
            reason: "completed".into(),
            loss_scale: None,
            compiles: None,
            t_ns: 9,
        });
        assert_eq!(f.step, 11);
    }
}
