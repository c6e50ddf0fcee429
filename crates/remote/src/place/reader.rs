//! A run's journal as it grows, from a byte offset: an ssh connection's
//! `tail -F` of the journal file, or a Ray job's log polled over HTTP.
//! Either lives no longer than the studio reading it.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::error::{RemoteError, RemoteResult};
use crate::shell::{follow_script, sh_c, ssh};
use crate::url::SshUrl;

/// What fetches a job's whole log.
pub(crate) type Fetch = std::sync::Arc<dyn Fn() -> Result<Vec<u8>, String> + Send + Sync>;

/// How often a job's log is asked for.
const POLL: Duration = Duration::from_secs(1);

/// Where journal bytes come from.
pub(crate) enum Reader {
    /// The connection lives no longer than the studio that reads it: ssh's
    /// stdin is a pipe only this process holds, never written, and the
    /// host's shell ends its `tail` when that stdin closes
    /// ([`follow_script`]). However the studio ends (done, window closed,
    /// terminal closed, killed), the kernel closes the pipe, ssh passes the
    /// end of input to the host, the `tail` there is killed and the
    /// session, then ssh, end — also when the run's agent is dead and the
    /// journal never grows again.
    Ssh {
        child: Box<Child>,
        out: ChildStdout,
        /// Held, never written, until this reader is done with.
        stdin: Option<ChildStdin>,
    },
    /// The job's whole log asked for every [`POLL`]; what lies past the
    /// offset is new. Nothing runs on this machine between two polls.
    Log {
        /// Fetches the log's bytes (on a blocking thread).
        fetch: Fetch,
        offset: u64,
        /// When the log is asked for next.
        next_poll: tokio::time::Instant,
        /// A fetch under way, kept across a `select!` that drops `next`.
        pending: Option<tokio::task::JoinHandle<Result<Vec<u8>, String>>>,
    },
}

impl Reader {
    /// A log fetched by `fetch`, read from `offset`.
    pub(crate) fn log(fetch: Fetch, offset: u64) -> Reader {
        Reader::Log {
            fetch,
            offset,
            next_poll: tokio::time::Instant::now(),
            pending: None,
        }
    }

    /// `tail -F` of `dir/journal.jsonl` from `offset`, over ssh.
    pub(crate) fn ssh_tail(url: &SshUrl, dir: &str, offset: u64) -> RemoteResult<Reader> {
        let mut child = tokio::process::Command::from(ssh(url)?)
            .arg(sh_c(&follow_script(offset, dir)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| RemoteError::Internal(format!("cannot start ssh: {e}")))?;
        let out = child
            .stdout
            .take()
            .ok_or_else(|| RemoteError::Internal("ssh has no stdout".into()))?;
        let stdin = child.stdin.take();
        Ok(Reader::Ssh {
            child: Box::new(child),
            out,
            stdin,
        })
    }

    /// The next bytes; `None` when the connection ended (or the log could
    /// not be fetched): the caller reconnects from its offset. Safe to
    /// drop half-way (in a `select!`): nothing is counted as read until it
    /// is returned.
    pub(crate) async fn next(&mut self, buf: &mut [u8]) -> Option<Vec<u8>> {
        match self {
            Reader::Ssh { out, .. } => match out.read(buf).await {
                Ok(0) | Err(_) => None,
                Ok(n) => Some(buf[..n].to_vec()),
            },
            Reader::Log {
                fetch,
                offset,
                next_poll,
                pending,
            } => loop {
                let handle = match pending {
                    Some(h) => h,
                    None => {
                        tokio::time::sleep_until(*next_poll).await;
                        let f = std::sync::Arc::clone(fetch);
                        pending.insert(tokio::task::spawn_blocking(move || f()))
                    }
                };
                let got = handle.await;
                *pending = None;
                *next_poll = tokio::time::Instant::now() + POLL;
                let log = got.ok()?.ok()?;
                let at = usize::try_from(*offset).unwrap_or(usize::MAX);
                if log.len() > at {
                    *offset = log.len() as u64;
                    return Some(log[at..].to_vec());
                }
            },
        }
    }

    /// Ends the reader: the ssh connection closed and waited for.
    pub(crate) async fn close(self) {
        if let Reader::Ssh {
            mut child, stdin, ..
        } = self
        {
            drop(stdin);
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}
