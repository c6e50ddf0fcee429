//! Clocks: CLOCK_MONOTONIC nanoseconds for protocol timestamps, and the time
//! since this process was started by the kernel.

use rustix::time::{clock_gettime, ClockId};

/// CLOCK_MONOTONIC in nanoseconds: comparable across processes on one machine.
pub fn monotonic_ns() -> u64 {
    let ts = clock_gettime(ClockId::Monotonic);
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Seconds since the kernel started this process (from `/proc/self/stat`,
/// clock-tick resolution, usually 10 ms), or `None` where that is unreadable.
pub fn since_process_start_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Field 22 (starttime) counts from after the command name, which may hold spaces.
    let after_name = &stat[stat.rfind(')')? + 2..];
    let start_ticks: f64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    let boot = clock_gettime(ClockId::Boottime);
    let now = boot.tv_sec as f64 + boot.tv_nsec as f64 / 1e9;
    Some(now - start_ticks / ticks)
}

/// Peak resident set size of this process (VmHWM), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
