//! Writes that outlast a busy or full store. While a worker trains, a flush
//! waits only briefly for the database's lock ([`FLUSH_WAIT`]): when another
//! process holds it (a long import or delete in a second terminal), what was
//! not written stays buffered and goes with the next flush, and reading the
//! worker's output is never held up; the same when the disk is full (the
//! worker trains on, never stopped for it). At the end of a run the last
//! writes are retried ([`patiently`]): a busy store for up to
//! [`STORE_PATIENCE`], a full disk until there is space again (up to
//! [`DISK_FULL_PATIENCE`], saying every minute what to do), so the run is
//! stored whole once space is freed; only then does the run end with the
//! store's error.

use std::time::Duration;

use tokio::time::{sleep, Instant};
use trainbench_store::StoreError;

/// How long a flush during a run waits for another writer's lock.
pub const FLUSH_WAIT: Duration = Duration::from_millis(100);
/// How long the end of a run keeps retrying a busy store.
pub const STORE_PATIENCE: Duration = Duration::from_secs(600);
/// How long the end of a run waits for space on a full disk, its
/// measurements kept in memory meanwhile.
pub const DISK_FULL_PATIENCE: Duration = Duration::from_secs(24 * 3600);
/// How often the wait for space is said again.
const REMIND: Duration = Duration::from_secs(60);

/// A store error that goes away by itself: another writer's lock, or a full
/// disk that gets space back.
pub fn transient(e: &StoreError) -> bool {
    e.is_busy() || e.is_disk_full()
}

/// `write` retried while its error is [`transient`], pausing 0.1 s and
/// doubling up to 2 s between tries: for at most `patience` while the store
/// is busy, for at most [`DISK_FULL_PATIENCE`] while the disk is full.
/// `waiting` hears the error when the wait for space starts and every
/// minute after.
pub async fn patiently<T>(
    patience: Duration,
    mut write: impl FnMut() -> Result<T, StoreError>,
    mut waiting: impl FnMut(&StoreError),
) -> Result<T, StoreError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(100);
    let mut told: Option<Instant> = None;
    loop {
        match write() {
            Err(e) if transient(&e) => {
                let limit = if e.is_disk_full() {
                    DISK_FULL_PATIENCE
                } else {
                    patience
                };
                if start.elapsed() + pause >= limit {
                    return Err(e);
                }
                if e.is_disk_full() && told.is_none_or(|t| t.elapsed() >= REMIND) {
                    waiting(&e);
                    told = Some(Instant::now());
                }
                sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}
