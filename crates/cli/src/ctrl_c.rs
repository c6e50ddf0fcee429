//! Ctrl-C as a stop switch: what a command that runs on a runtime does when
//! the person presses it (cancels a run, a search, an attached run, a GPU
//! session's item), said in the command's own words.

use tokio::runtime::Runtime;
use tokio::sync::watch;

/// A switch that turns on at Ctrl-C, after `words` are printed on stderr on
/// a line of their own; its handler is in place on `runtime` before this
/// returns, so a Ctrl-C during the first run is not missed.
pub fn switch(runtime: &Runtime, words: &'static str) -> watch::Receiver<bool> {
    let (tx, stop) = watch::channel(false);
    runtime.block_on(async {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\n{words}");
                let _ = tx.send(true);
            }
        });
        tokio::task::yield_now().await;
    });
    stop
}
