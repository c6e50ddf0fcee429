//! The kit a host needs to run jobs: the studio's command-line binary and
//! the Python workers, sent once per version (a hash of its files) and
//! checked on the host against a manifest of SHA-256 sums after every
//! unpacking and before every reuse, so a kit cut short in transit or
//! changed on the host afterwards is sent again rather than run.

use std::path::{Path, PathBuf};
use std::process::Command;

use trainbench_runner::envs;

use crate::error::{RemoteError, RemoteResult};
use crate::shell::{quote, remote_sh};
use crate::url::SshUrl;

/// The manifest's name in the kit: `sha256sum -c` reads it.
const MANIFEST: &str = "MANIFEST.sha256";

/// The files of the kit and where they go in it.
pub(crate) struct LocalKit {
    /// (this machine's file, its path in the kit).
    files: Vec<(PathBuf, String)>,
    /// `HEX  ./path` per file, sorted by path.
    manifest: String,
    pub(crate) version: String,
}

/// The command-line binary sent as the kit's `bin/trainbench`:
/// `TRAINBENCH_REMOTE_BINARY`, or else [`cli_binary_for`] this program.
fn cli_binary() -> RemoteResult<PathBuf> {
    if let Some(p) = std::env::var_os("TRAINBENCH_REMOTE_BINARY") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()
        .map_err(|e| RemoteError::Internal(format!("cannot find this program's binary: {e}")))?;
    cli_binary_for(&exe)
}

/// `exe` when it is the CLI, or else the CLI installed beside it (the
/// desktop app's case: its own binary opens a window, useless on a host).
fn cli_binary_for(exe: &Path) -> RemoteResult<PathBuf> {
    if exe.file_name().is_some_and(|n| n == "trainbench") {
        return Ok(exe.to_owned());
    }
    let beside = exe.with_file_name("trainbench");
    if beside.is_file() {
        return Ok(beside);
    }
    Err(RemoteError::BadInput {
        field: "host".into(),
        message: format!(
            "host is not allowed yet: remote hosts run the studio's command-line program `trainbench`, which is not installed beside {} (install the package with both programs, or set TRAINBENCH_REMOTE_BINARY to its path)",
            exe.display()
        ),
    })
}

impl LocalKit {
    /// 16 hexadecimal digits of the manifest's SHA-256: the kit's identity.
    pub(crate) fn digest_hex(&self) -> String {
        crate::agent::sha256_hex(self.manifest.as_bytes())[..16].to_owned()
    }

    /// Every file's path in the kit, bytes and mode (programs under `bin/`
    /// executable), the manifest last.
    pub(crate) fn read_files(&self) -> Result<Vec<(String, Vec<u8>, u32)>, String> {
        let mut out = Vec::with_capacity(self.files.len() + 1);
        for (path, rel) in &self.files {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mode = if rel.starts_with("bin/") {
                0o755
            } else {
                0o644
            };
            out.push((rel.clone(), bytes, mode));
        }
        out.push((
            MANIFEST.to_owned(),
            self.manifest.clone().into_bytes(),
            0o644,
        ));
        Ok(out)
    }
}

pub(crate) fn local_kit() -> RemoteResult<LocalKit> {
    let exe = cli_binary()?;
    let workers = envs::package_dir().join("trainbench_worker");
    let mut files = vec![(exe, "bin/trainbench".to_owned())];
    let mut py = Vec::new();
    collect_py(&workers, &mut py);
    for f in py {
        let rel = f.strip_prefix(&workers).unwrap_or(&f).to_string_lossy();
        let rel = format!("share/trainbench/workers/python/trainbench_worker/{rel}");
        files.push((f, rel));
    }
    files.sort_by(|a, b| a.1.cmp(&b.1));
    let manifest = manifest_of(files.iter().map(|(p, rel)| (p.clone(), rel.as_str())))?;
    let hex = crate::agent::sha256_hex(manifest.as_bytes());
    Ok(LocalKit {
        files,
        manifest,
        version: format!("{}-{}", env!("CARGO_PKG_VERSION"), &hex[..12]),
    })
}

/// `HEX  ./path` for each (file, path in the kit).
fn manifest_of<'a>(files: impl Iterator<Item = (PathBuf, &'a str)>) -> RemoteResult<String> {
    let mut manifest = String::new();
    for (path, rel) in files {
        let bytes = std::fs::read(&path)
            .map_err(|e| RemoteError::Internal(format!("cannot read {}: {e}", path.display())))?;
        let sum = crate::agent::sha256_hex(&bytes);
        manifest.push_str(&format!("{sum}  ./{rel}\n"));
    }
    Ok(manifest)
}

fn collect_py(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                collect_py(&p, out);
            } else if p.extension().is_some_and(|x| x == "py" || x == "json") {
                // The code, and the plan's schema the workers check plans against.
                out.push(p);
            }
        }
    }
}

/// The shell test that the kit in `dir` (quoted) matches its manifest.
fn verified(dir: &str) -> String {
    format!("(cd {dir} && sha256sum -c {MANIFEST} >/dev/null 2>&1)")
}

/// Sends the kit unless the host has this version, whole; returns its
/// folder there.
pub(crate) fn install_kit(
    url: &SshUrl,
    kit: &LocalKit,
    say: &mut dyn FnMut(&str),
) -> RemoteResult<String> {
    let dir = format!("{}/kit/{}", url.root, kit.version);
    let d = quote(&dir);
    let have = remote_sh(
        url,
        &format!("if {} ; then cd {d} && pwd; fi", verified(&d)),
        None,
    )?;
    if !have.trim().is_empty() {
        say(&format!(
            "the kit is on {} already ({})",
            url.host,
            have.trim()
        ));
        return Ok(have.trim().to_owned());
    }
    let tar = kit_tar(kit)?;
    say(&format!(
        "sending the kit to {} ({:.1} MB) and checking it against its manifest",
        url.host,
        tar.len() as f64 / 1e6
    ));
    // A folder of this studio's own to unpack into: two studios sending the
    // same kit at once do not unpack into one folder.
    let part = quote(&format!(
        "{dir}.part-{}-{}",
        std::process::id(),
        trainbench_store::now_unix_ms()
    ));
    let script = format!(
        "set -e; command -v sha256sum >/dev/null || {{ echo 'the host has no sha256sum (coreutils), needed to check the kit' >&2; exit 3; }}; \
         rm -rf {part}; mkdir -p {part}; tar -xzf - -C {part}; \
         if ! {check_part}; then echo 'the kit sent does not match its manifest (cut short or changed on the way)' >&2; rm -rf {part}; exit 4; fi; \
         if {check_dir}; then rm -rf {part}; else rm -rf {d}; mv -T {part} {d} || rm -rf {part}; fi; \
         {check_dir} || {{ echo 'the kit on the host does not match its manifest' >&2; exit 4; }}; cd {d}; pwd",
        check_part = verified(&part),
        check_dir = verified(&d),
    );
    Ok(remote_sh(url, &script, Some(&tar))?.trim().to_owned())
}

/// The kit as a gzipped tar, packed once per kit ([`crate::kit_packs`]).
fn kit_tar(kit: &LocalKit) -> RemoteResult<Vec<u8>> {
    crate::kit_packs::kept_or(&envs::home().join("kit-packs"), &kit.manifest, || pack(kit))
}

/// The kit as a gzipped tar: its files and the manifest.
fn pack(kit: &LocalKit) -> RemoteResult<Vec<u8>> {
    let stage = trainbench_files::OwnedDir::new(
        envs::home().join(format!("kit-staging-{}", std::process::id())),
    );
    let io = |e: std::io::Error| RemoteError::Internal(format!("staging the kit: {e}"));
    let _ = std::fs::remove_dir_all(stage.path());
    std::fs::create_dir_all(stage.path()).map_err(io)?;
    for (src, rel) in &kit.files {
        let to = stage.path().join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::copy(src, &to).map_err(io)?;
    }
    // What is sent is what was hashed: a file replaced meanwhile (an
    // upgrade, a rebuild) stops here instead of failing the check there.
    let staged = manifest_of(
        kit.files
            .iter()
            .map(|(_, rel)| (stage.path().join(rel), rel.as_str())),
    )?;
    if staged != kit.manifest {
        return Err(RemoteError::Internal(
            "the studio's files changed while the kit was being made (an upgrade or a rebuild?): try again".into(),
        ));
    }
    std::fs::write(stage.path().join(MANIFEST), &kit.manifest).map_err(io)?;
    // gzip's fastest level: the kit is mostly one program, which level 1
    // makes 12 % larger than the default level 6 in a quarter of the CPU
    // time (docs/build-times.md); the host unpacks either with `tar -xz`.
    let tar = Command::new("tar")
        .arg("-C")
        .arg(stage.path())
        .args(["--use-compress-program=gzip -1", "-cf", "-", "."])
        .output()
        .map_err(|e| RemoteError::Internal(format!("tar: {e}")))?;
    if !tar.status.success() {
        return Err(RemoteError::Internal(format!(
            "tar: {}",
            String::from_utf8_lossy(&tar.stderr)
        )));
    }
    Ok(tar.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_desktop_sends_the_command_line_program_beside_it() {
        let dir = std::env::temp_dir().join(format!("tb-kit-bin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let studio = dir.join("trainbench-studio");
        std::fs::write(&studio, b"gui").unwrap();
        let e = cli_binary_for(&studio).unwrap_err().to_string();
        assert!(
            e.contains("`trainbench`, which is not installed beside"),
            "{e}"
        );
        std::fs::write(dir.join("trainbench"), b"cli").unwrap();
        assert_eq!(cli_binary_for(&studio).unwrap(), dir.join("trainbench"));
        assert_eq!(
            cli_binary_for(&dir.join("trainbench")).unwrap(),
            dir.join("trainbench")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
