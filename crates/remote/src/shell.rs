//! Everything the studio says to a remote shell goes through here: one
//! quoting function ([`quote`]) for every string that is not this file's own
//! text (interpreter paths, folders, variables, job ids, scripts), the
//! system `ssh` with its shared connection, and the check of the folder that
//! holds those connections.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::bad;
use crate::error::{RemoteError, RemoteResult};
use crate::hosts::RemoteHost;
use crate::url::SshUrl;

/// `s` as one word of a POSIX shell: single-quoted, each `'` written as
/// `'\''`. Inside single quotes no character is special (`$`, backticks,
/// `;`, `"`, `\`, `%`, newlines), so the word reaches the command unchanged.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command line ssh sends: `script` run by `sh -c`, whatever the login
/// shell of the account is (its own parsing sees one quoted word).
pub(crate) fn sh_c(script: &str) -> String {
    format!("sh -c {}", quote(script))
}

/// The system ssh towards a host: batch mode (a key or the agent, never a
/// password prompt), keep-alives, and one shared connection per host.
pub(crate) fn ssh(url: &SshUrl) -> RemoteResult<Command> {
    let mut c = Command::new(std::env::var_os("TRAINBENCH_SSH").unwrap_or_else(|| "ssh".into()));
    if let Some(cfg) = std::env::var_os("TRAINBENCH_SSH_CONFIG") {
        c.arg("-F").arg(cfg);
    }
    let control = private_dir(&control_dir())?;
    c.args(["-o", "BatchMode=yes"]);
    c.args(shared_connection(&control));
    c.args([
        "-o",
        "ConnectTimeout=15",
        "-o",
        "ServerAliveInterval=5",
        "-o",
        "ServerAliveCountMax=3",
    ]);
    if let Some(p) = url.port {
        c.args(["-p", &p.to_string()]);
    }
    c.arg(url.destination()).arg("--");
    Ok(c)
}

/// The longest socket path ssh can use (`sun_path` holds 108 bytes with its
/// final zero; ssh adds `.` and 16 random characters while it sets one up).
const SOCKET_PATH_MAX: usize = 107 - 17;

/// ssh's options for one shared connection per host, its socket in
/// `control/` named by the hash of the connection (`%C`, 40 characters).
/// A folder whose path leaves no room for that name gets no sharing: every
/// command opens its own connection, slower but working, instead of ssh
/// refusing to connect at all.
fn shared_connection(control: &Path) -> Vec<String> {
    let dir = control.display().to_string();
    if dir.len() + 1 + 40 > SOCKET_PATH_MAX {
        return ["-o", "ControlMaster=no", "-o", "ControlPath=none"]
            .map(String::from)
            .to_vec();
    }
    // ssh expands `%` in the path: a literal one is written `%%`.
    [
        "-o".to_owned(),
        "ControlMaster=auto".to_owned(),
        "-o".to_owned(),
        format!("ControlPath={}/%C", dir.replace('%', "%%")),
        "-o".to_owned(),
        "ControlPersist=60".to_owned(),
    ]
    .to_vec()
}

/// Where ssh's shared connections live: short (a socket path has ~100
/// bytes), one folder per user.
fn control_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("TRAINBENCH_SSH_CONTROL_DIR") {
        return PathBuf::from(d);
    }
    let uid = rustix::process::getuid().as_raw();
    std::env::temp_dir().join(format!("trainbench-ssh-{uid}"))
}

/// `dir`, created with mode 0700 if missing. A folder someone else owns, a
/// link, or one others may write to is refused: whoever controls it could
/// put a socket there that ssh would use as the connection to a host. A
/// folder of the user's own that others may only read is made 0700.
pub(crate) fn private_dir(dir: &Path) -> RemoteResult<PathBuf> {
    let refuse = |why: String| {
        bad(
            "ssh control folder",
            format!(
                "ssh control folder = {} is not allowed: {why}; expected a folder of your own with mode 0700 (or set TRAINBENCH_SSH_CONTROL_DIR)",
                dir.display()
            ),
        )
    };
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(refuse(format!("it cannot be created ({e})"))),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| refuse(e.to_string()))?;
    if !meta.is_dir() {
        return Err(refuse("it is a link or not a folder".into()));
    }
    let uid = rustix::process::getuid().as_raw();
    if meta.uid() != uid {
        return Err(refuse(format!(
            "it belongs to user id {}, not to you ({uid})",
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(refuse(format!("others may write to it (mode {mode:o})")));
    }
    if mode != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| refuse(format!("its mode {mode:o} cannot be made 0700 ({e})")))?;
    }
    Ok(dir.to_owned())
}

/// `script` with the host's variables exported first.
pub(crate) fn host_sh(h: &RemoteHost, script: &str, stdin: Option<&[u8]>) -> RemoteResult<String> {
    let exports: String = h
        .env
        .iter()
        .map(|(k, v)| format!("export {k}={}; ", quote(v)))
        .collect();
    remote_sh(h.url.ssh()?, &format!("{exports}{script}"), stdin)
}

/// Runs `script` on the host with `sh -c`; its stdout, or an error with ssh's
/// or the script's message.
pub(crate) fn remote_sh(url: &SshUrl, script: &str, stdin: Option<&[u8]>) -> RemoteResult<String> {
    let mut c = ssh(url)?;
    c.arg(sh_c(script));
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = c
        .spawn()
        .map_err(|e| RemoteError::Internal(format!("cannot start ssh: {e}")))?;
    if let (Some(bytes), Some(mut input)) = (stdin, child.stdin.take()) {
        let _ = input.write_all(bytes);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| RemoteError::Internal(format!("ssh: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(unreachable_or(url, out.status.code(), &err));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn unreachable_or(url: &SshUrl, code: Option<i32>, err: &str) -> RemoteError {
    if code == Some(255) {
        bad(
            "host",
            format!("cannot reach {url} over ssh: {err} (the studio runs `ssh` in batch mode: a key or the agent must log in without a prompt)"),
        )
    } else {
        RemoteError::Internal(format!(
            "on {url}: {err} (exit {})",
            code.map_or("?".into(), |c| c.to_string())
        ))
    }
}

/// The host's side of a journal reader: the journal from byte `offset`
/// on, followed (`tail -F`, in the background), until the shell's stdin
/// (the ssh session's input) ends; then the `tail` is killed. Without
/// that, a `tail` whose reader is gone lives as long as the journal does
/// not grow: for ever once the run's agent is dead.
pub(crate) fn follow_script(offset: u64, dir: &str) -> String {
    format!(
        "tail -c +{} -F {}/journal.jsonl 2>/dev/null & t=$!; cat >/dev/null; kill $t 2>/dev/null",
        offset + 1,
        quote(dir)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_folder_too_long_for_a_socket_turns_sharing_off_instead_of_failing() {
        let short = shared_connection(Path::new("/tmp/trainbench-ssh-0"));
        assert!(short.contains(&"ControlPath=/tmp/trainbench-ssh-0/%C".to_owned()));
        assert!(short.contains(&"ControlMaster=auto".to_owned()));
        let pct = shared_connection(Path::new("/tmp/50%"));
        assert!(pct.contains(&"ControlPath=/tmp/50%%/%C".to_owned()));
        // 49 characters of folder: 49 + 1 + 40 + 17 = 107, the most a socket takes.
        let edge = format!("/{}", "d".repeat(48));
        assert!(shared_connection(Path::new(&edge)).contains(&format!("ControlPath={edge}/%C")));
        let long = format!("/{}", "d".repeat(49));
        let off = shared_connection(Path::new(&long));
        assert_eq!(off, ["-o", "ControlMaster=no", "-o", "ControlPath=none"]);
    }

    /// Words an attacker would try, and random mixes of shell metacharacters.
    pub(crate) fn hostile_words() -> Vec<String> {
        let mut words: Vec<String> = [
            "a b",
            "it's",
            "$(touch MARK)",
            "`touch MARK`",
            "; touch MARK",
            "'; touch MARK; '",
            "\"; touch MARK; \"",
            "x\ny; touch MARK",
            "%s%n%C$HOME",
            "-c touch MARK",
            "\\'$(touch MARK)\\'",
            "a && touch MARK || touch MARK",
            "> MARK",
            "",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let alphabet: Vec<char> = "$()`;'\"\\%&|<>*?{}~!# \n\tab-=".chars().collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200 {
            let len = 1 + (x % 24) as usize;
            let mut w = String::new();
            for _ in 0..len {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                w.push(alphabet[(x >> 33) as usize % alphabet.len()]);
            }
            words.push(w);
        }
        words
    }

    #[test]
    fn every_word_reaches_a_real_shell_unchanged_and_runs_nothing() {
        let dir = std::env::temp_dir().join(format!("tb-quote-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for w in hostile_words() {
            // Twice through a shell, as over ssh: the login shell, then sh -c.
            let line = sh_c(&format!("printf '%s' {}", quote(&w)));
            let out = Command::new("sh")
                .arg("-c")
                .arg(&line)
                .current_dir(&dir)
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), w, "{line}");
            assert!(!dir.join("MARK").exists(), "{w:?} ran a command");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_control_folder_must_be_ones_own_and_closed_to_others() {
        let root = std::env::temp_dir().join(format!("tb-control-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // Missing: created 0700.
        let fresh = root.join("fresh");
        private_dir(&fresh).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        assert_eq!(mode(&fresh), 0o700);
        // Readable by others: closed.
        let open = root.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&open).unwrap();
        assert_eq!(mode(&open), 0o700);
        // Writable by others, or a link: refused, left as it was.
        let shared = root.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = private_dir(&shared).unwrap_err().to_string();
        assert!(
            e.contains("ssh control folder = ") && e.contains("others may write"),
            "{e}"
        );
        assert_eq!(mode(&shared), 0o777);
        let link = root.join("link");
        std::os::unix::fs::symlink(&fresh, &link).unwrap();
        let e = private_dir(&link).unwrap_err().to_string();
        assert!(e.contains("a link"), "{e}");
        // Someone else's (only root can make one here).
        if rustix::process::geteuid().is_root() {
            let theirs = root.join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
            let e = private_dir(&theirs).unwrap_err().to_string();
            assert!(e.contains("belongs to user id 65534"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The host's side of a journal reader, run by `sh -c` here: the
    /// journal from the offset, what is appended later, and nothing left
    /// running once its stdin (the ssh session's input) closes, though the
    /// journal never grows again: the shell ends, and so does its `tail`
    /// (the pipe it wrote to reads to its end).
    #[test]
    fn a_journal_reader_follows_from_the_offset_and_ends_when_its_input_closes() {
        use std::io::{BufRead, BufReader, Write};
        use std::time::{Duration, Instant};
        let dir = std::env::temp_dir().join(format!("tb follow's {}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let journal = dir.join("journal.jsonl");
        std::fs::write(&journal, "abc\ndef\n").unwrap();
        let mut sh = Command::new("sh")
            .arg("-c")
            .arg(follow_script(4, &dir.display().to_string()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Lines as they come, then `None` at the end of the output.
        let (tx, rx) = std::sync::mpsc::channel();
        let out = BufReader::new(sh.stdout.take().unwrap());
        let reader = std::thread::Builder::new()
            .name("journal-reader".into())
            .spawn(move || {
                for line in out.lines() {
                    let _ = tx.send(Some(line.unwrap()));
                }
                let _ = tx.send(None);
            })
            .unwrap();
        let next = || {
            rx.recv_timeout(Duration::from_secs(20))
                .expect("nothing read in 20 s")
        };
        assert_eq!(next().as_deref(), Some("def"));
        std::fs::OpenOptions::new()
            .append(true)
            .open(&journal)
            .unwrap()
            .write_all(b"ghi\n")
            .unwrap();
        assert_eq!(next().as_deref(), Some("ghi"));
        drop(sh.stdin.take());
        assert_eq!(next(), None, "the journal's reader outlived its input");
        let deadline = Instant::now() + Duration::from_secs(20);
        while sh.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the shell outlived its input");
            std::thread::sleep(Duration::from_millis(20));
        }
        reader.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
