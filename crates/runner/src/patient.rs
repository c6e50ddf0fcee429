//! Writes that outlast a busy or full store. While a worker trains, a flush
//! waits only briefly for the database's lock ([`FLUSH_WAIT`]): when another
//! process holds it (a long import or delete in a second terminal), what was
//! not written stays buffered and goes with the next flush, and reading the
//! worker's output is never held up. At the end of a run the last writes are
//! retried ([`patiently`]) until the lock is free or there is space again, for
//! up to [`STORE_PATIENCE`]; only then does the run end with the store's error.

use std::time::Duration;

use tokio::time::{sleep, Instant};
use trainbench_store::StoreError;

/// How long a flush during a run waits for another writer's lock.
pub const FLUSH_WAIT: Duration = Duration::from_millis(100);
/// How long the end of a run keeps retrying a busy or full store.
pub const STORE_PATIENCE: Duration = Duration::from_secs(600);

/// A store error that goes away by itself: another writer's lock, or a full
/// disk that gets space back.
pub fn transient(e: &StoreError) -> bool {
    e.is_busy() || e.is_disk_full()
}

/// `write` retried while its error is [`transient`], pausing 0.1 s and
/// doubling up to 2 s between tries, for at most `patience`.
pub async fn patiently<T>(
    patience: Duration,
    mut write: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let deadline = Instant::now() + patience;
    let mut pause = Duration::from_millis(100);
    loop {
        match write() {
            Err(e) if transient(&e) && Instant::now() + pause < deadline => {
                sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}
