//! How far an environment install has got, read from what the installer
//! itself prints (uv, else pip): packages resolved, downloaded and
//! installed, and the bytes of the downloads it announced. Nothing here is
//! estimated: a figure the installer has not stated yet stays empty.
//!
//! uv (non-interactive) prints `Resolved 27 packages in 1.2s`,
//! `Downloading torch (846.9MiB)` for each download of 1 MiB or more and
//! ` Downloaded torch` when it is complete, then `Installed 27 packages in
//! 200ms` and ` + torch==2.13.0` per package. pip (`--progress-bar off`)
//! prints `Collecting torch==2.13.0`, `  Downloading torch-…whl (900.1 MB)`
//! and `Successfully installed a-1 b-2 …`.

use serde::Serialize;

/// What a person sees while an environment installs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct InstallProgress {
    /// What is happening now, in words ("downloading", "checking the worker" …).
    pub step: String,
    /// Packages the installer resolved (uv says so up front; pip's count
    /// grows as it collects them).
    pub packages_total: Option<u32>,
    /// Packages installed into the environment so far.
    pub packages_installed: u32,
    /// Downloads announced with their size, and how many of them finished.
    pub downloads_announced: u32,
    pub downloads_done: u32,
    /// Bytes of the announced downloads, and of those finished.
    pub bytes_total: u64,
    pub bytes_done: u64,
    /// Seconds since the install started.
    pub elapsed_s: f64,
}

/// Reads installer lines one at a time into an [`InstallProgress`].
#[derive(Debug, Default)]
pub struct InstallMeter {
    progress: InstallProgress,
    /// uv: announced downloads not finished yet, by name, with their size.
    pending: Vec<(String, u64)>,
    /// pip: the download in flight (finished when the next line of another kind comes).
    pip_current: Option<u64>,
    pip_collected: u32,
    /// Packages resolved and installed by the installer's earlier commands
    /// (an environment takes two: its requirements, then the MNIST sample's
    /// package alone), which each command's own counts add to.
    earlier: (u32, u32),
}

/// `846.9MiB`, `900.1 MB`, `12 kB` → bytes.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "B" | "bytes" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = n * mult;
    (bytes.is_finite() && bytes >= 0.0).then_some(bytes.round() as u64)
}

/// The size in the last `( … )` of a line.
fn size_in_parens(line: &str) -> Option<u64> {
    let open = line.rfind('(')?;
    let close = line[open..].find(')')? + open;
    parse_size(&line[open + 1..close])
}

/// The number in `Resolved 27 packages …` / `Installed 27 packages …`.
fn count_after(line: &str, verb: &str) -> Option<u32> {
    let rest = line.trim().strip_prefix(verb)?.trim_start();
    let n = rest.split_whitespace().next()?;
    rest.split_whitespace()
        .nth(1)
        .filter(|w| w.starts_with("package"))?;
    n.parse().ok()
}

impl InstallMeter {
    pub fn new() -> InstallMeter {
        InstallMeter::default()
    }

    /// The figures so far.
    pub fn progress(&self) -> &InstallProgress {
        &self.progress
    }

    /// Sets the step in words (the installer's own lines set it too); a
    /// step is one installer command, whose counts add to the earlier ones'.
    pub fn step(&mut self, step: &str) {
        step.clone_into(&mut self.progress.step);
        self.earlier = (
            self.progress.packages_total.unwrap_or(0),
            self.progress.packages_installed,
        );
    }

    pub fn elapsed(&mut self, seconds: f64) {
        self.progress.elapsed_s = seconds;
    }

    fn finish_pip_download(&mut self) {
        if let Some(bytes) = self.pip_current.take() {
            self.progress.downloads_done += 1;
            self.progress.bytes_done += bytes;
        }
    }

    /// Takes one line of the installer's output.
    pub fn line(&mut self, line: &str) {
        let p = &mut self.progress;
        let t = line.trim();
        // uv
        if let Some(n) = count_after(t, "Resolved") {
            p.packages_total = Some(self.earlier.0 + n);
            p.step = "resolved".into();
        } else if let Some(name) = t
            .strip_prefix("Downloading ")
            .filter(|_| !line.starts_with(' '))
        {
            let bytes = size_in_parens(t).unwrap_or(0);
            let name = name.split_whitespace().next().unwrap_or("").to_owned();
            p.downloads_announced += 1;
            p.bytes_total += bytes;
            p.step = "downloading".into();
            self.pending.push((name, bytes));
        } else if let Some(name) = t.strip_prefix("Downloaded ") {
            let name = name.trim();
            if let Some(i) = self.pending.iter().position(|(n, _)| n == name) {
                let (_, bytes) = self.pending.swap_remove(i);
                p.downloads_done += 1;
                p.bytes_done += bytes;
            }
        } else if t.starts_with("Prepared ") && t.contains(" package") {
            p.step = "installing".into();
        } else if let Some(n) = count_after(t, "Installed") {
            // uv then lists each package (` + name==version`): counted here.
            p.packages_installed = self.earlier.1 + n;
            p.step = "installed".into();
        }
        // pip
        else if t.starts_with("Collecting ") {
            self.finish_pip_download();
            self.pip_collected += 1;
            self.progress.packages_total = Some(self.pip_collected);
            self.progress.step = "collecting".into();
        } else if t.starts_with("Downloading ") {
            // pip indents it under `Collecting`.
            self.finish_pip_download();
            let bytes = size_in_parens(t).unwrap_or(0);
            self.progress.downloads_announced += 1;
            self.progress.bytes_total += bytes;
            self.progress.step = "downloading".into();
            self.pip_current = Some(bytes);
        } else if t.starts_with("Installing collected packages:") {
            self.finish_pip_download();
            self.progress.step = "installing".into();
        } else if let Some(list) = t.strip_prefix("Successfully installed ") {
            self.progress.packages_installed =
                self.earlier.1 + list.split_whitespace().count() as u32;
            self.progress.step = "installed".into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &str) -> InstallProgress {
        let mut m = InstallMeter::new();
        for l in lines.lines() {
            m.line(l);
        }
        m.progress().clone()
    }

    #[test]
    fn sizes_in_both_installers_units() {
        assert_eq!(parse_size("11.8MiB"), Some(12_373_197));
        assert_eq!(parse_size("900.1 MB"), Some(900_100_000));
        assert_eq!(parse_size("12 kB"), Some(12_000));
        assert_eq!(parse_size("5 parsecs"), None);
        assert_eq!(
            size_in_parens("Downloading numpy (16.1MiB)"),
            Some(16_882_074)
        );
    }

    /// uv 0.13.9's output, installing mlxtend into an empty environment
    /// with an empty cache (captured on this machine).
    #[test]
    fn uv_output_gives_packages_and_bytes() {
        let half = read(
            "Using Python 3.11.7 environment at: env\n\
             Resolved 19 packages in 580ms\n\
             Downloading pandas (11.8MiB)\n\
             Downloading numpy (16.1MiB)\n\
             Downloading scipy (33.7MiB)\n\
             \x20Downloaded numpy\n",
        );
        assert_eq!(half.packages_total, Some(19));
        assert_eq!((half.downloads_announced, half.downloads_done), (3, 1));
        assert_eq!(half.bytes_done, 16_882_074);
        assert_eq!(
            half.bytes_total,
            parse_size("11.8MiB").unwrap_or(0) + 16_882_074 + parse_size("33.7MiB").unwrap_or(0)
        );
        assert_eq!(half.packages_installed, 0);
        assert_eq!(half.step, "downloading");

        let done = read(
            "Resolved 19 packages in 580ms\n\
             Downloading pandas (11.8MiB)\n\
             \x20Downloaded pandas\n\
             Prepared 19 packages in 1.63s\n\
             Installed 19 packages in 133ms\n\
             \x20+ cloudpickle==3.1.2\n\
             \x20+ numpy==2.4.6\n",
        );
        assert_eq!(done.packages_installed, 19);
        assert_eq!(done.bytes_done, done.bytes_total);
        assert_eq!(done.step, "installed");
    }

    /// Two installer commands (the requirements, then the MNIST sample's
    /// package alone): the second's counts add to the first's.
    #[test]
    fn a_second_installer_command_adds_to_the_counts() {
        let mut m = InstallMeter::new();
        m.step("resolving and downloading");
        for l in [
            "Resolved 19 packages in 580ms",
            "Installed 19 packages in 133ms",
        ] {
            m.line(l);
        }
        m.step("installing the MNIST sample");
        for l in ["Resolved 1 package in 5ms", "Installed 1 package in 3ms"] {
            m.line(l);
        }
        let p = m.progress();
        assert_eq!((p.packages_total, p.packages_installed), (Some(20), 20));
        assert_eq!(p.step, "installed");
    }

    #[test]
    fn pip_output_gives_packages_and_bytes() {
        let p = read(
            "Collecting torch==2.13.0 (from -r req.txt (line 1))\n\
             \x20 Downloading torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl (900.1 MB)\n\
             Collecting filelock (from torch==2.13.0)\n\
             \x20 Downloading filelock-3.20.0-py3-none-any.whl (16 kB)\n\
             Collecting typing-extensions>=4.10.0\n",
        );
        assert_eq!(p.packages_total, Some(3));
        assert_eq!((p.downloads_announced, p.downloads_done), (2, 2));
        assert_eq!(p.bytes_total, 900_116_000);
        let done = read(
            "Collecting torch==2.13.0\n\
             \x20 Downloading torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl (900.1 MB)\n\
             Installing collected packages: torch\n\
             Successfully installed filelock-3.20.0 torch-2.13.0\n",
        );
        assert_eq!(done.packages_installed, 2);
        assert_eq!(done.bytes_done, 900_100_000);
    }

    #[test]
    fn other_lines_change_nothing() {
        assert_eq!(
            read("Requirement already satisfied: numpy\nResolved in a moment\n"),
            InstallProgress::default()
        );
    }
}
