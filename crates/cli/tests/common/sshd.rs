//! Real SSH servers for tests (shared by the CLI's and the desktop's tests):
//! two sshd on 127.0.0.1 with their own host keys accepting a test user key,
//! a client config (that key, known hosts, a ProxyJump alias `jumped`), and
//! a folder for ssh's shared connections, closed when dropped.
#![allow(clippy::unwrap_used, reason = "test support fails loudly")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nothing listens on now, never one this process was given
/// before: the kernel hands a released port out again often (about one
/// in twenty of 2,000 calls here), and a cluster given one port for two
/// of its services refuses to start.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The machine settings the suite runs with (scripts/test.sh: one thread,
/// JAX's compilation cache and random numbers), given to every session of
/// a test's sshd as a host's own profile would: the hosts are this
/// machine, set up as the tests' runs here are. Without them a JAX worker
/// on a test host compiled its model from nothing, and its jitted
/// initialisation with JAX's partitionable threefry, in about 20 s more
/// than here (a `SetEnv` line; empty when none is set).
fn set_env() -> String {
    let names = [
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "JAX_COMPILATION_CACHE_DIR",
        "JAX_THREEFRY_PARTITIONABLE",
    ];
    let pairs: Vec<String> = names
        .iter()
        .filter_map(|n| {
            let v = std::env::var(n).ok()?;
            let plain = !v.is_empty() && !v.contains(['"', '\\', '\n', '\r']);
            plain.then(|| format!("{n}=\"{v}\""))
        })
        .collect();
    if pairs.is_empty() {
        String::new()
    } else {
        format!("SetEnv {}\n", pairs.join(" "))
    }
}

pub fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

pub fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An sshd on 127.0.0.1 that accepts the test key; stopped when dropped.
pub struct Sshd {
    child: Child,
    pub port: u16,
}

impl Sshd {
    pub fn start(dir: &Path, name: &str) -> Sshd {
        // sshd started as root wants its privilege-separation folder.
        let _ = std::fs::create_dir_all("/run/sshd");
        let host_key = dir.join(format!("{name}-host-key"));
        keygen(&host_key);
        // A port free when chosen can be taken by another test's process
        // before sshd binds it: sshd then exits, and another port is tried.
        for _ in 0..5 {
            if let Some(started) = Sshd::try_start(dir, name, &host_key, free_port()) {
                return started;
            }
        }
        panic!("sshd for {name} exited at start on five ports");
    }

    /// sshd on `port`, once it listens; `None` when it exited first.
    pub fn try_start(dir: &Path, name: &str, host_key: &Path, port: u16) -> Option<Sshd> {
        let config = dir.join(format!("{name}-sshd_config"));
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\nPidFile {}\nLogLevel ERROR\n{}",
                host_key.display(),
                dir.join("authorized_keys").display(),
                dir.join(format!("{name}.pid")).display(),
                set_env(),
            ),
        )
        .unwrap();
        let mut child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("/usr/sbin/sshd (Debian's openssh-server; scripts/setup.sh installs it)");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            // Exited (its port taken): not this port. Checked before the
            // connection, which another process on the port would accept.
            if child.try_wait().unwrap().is_some() {
                return None;
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                // Still running a moment later: the listener is this sshd
                // (one that cannot bind exits at once).
                std::thread::sleep(Duration::from_millis(200));
                if child.try_wait().unwrap().is_some() {
                    return None;
                }
                return Some(Sshd { child, port });
            }
            assert!(
                Instant::now() < deadline,
                "sshd on port {port} never listened"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Sshd {
    /// Stops the server (the host is gone); connections it forked live on
    /// until their clients close them.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Two servers and the client's files in `dir`: `dir/ssh_config` and
/// `dir/cm` (for `TRAINBENCH_SSH_CONFIG`, `TRAINBENCH_SSH_CONTROL_DIR`).
pub struct Servers {
    pub dir: PathBuf,
    pub a: Sshd,
    pub b: Sshd,
}

impl Servers {
    pub fn start(dir: &Path) -> Servers {
        let key = dir.join("user-key");
        keygen(&key);
        std::fs::copy(dir.join("user-key.pub"), dir.join("authorized_keys")).unwrap();
        let a = Sshd::start(dir, "a");
        let b = Sshd::start(dir, "b");
        let u = user();
        std::fs::write(
            dir.join("ssh_config"),
            format!(
                "Host jumped\n  HostName 127.0.0.1\n  Port {}\n  User {u}\n  ProxyJump {u}@127.0.0.1:{}\n\
                 Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                 StrictHostKeyChecking accept-new\n  LogLevel ERROR\n",
                b.port,
                a.port,
                key.display(),
                dir.join("known_hosts").display()
            ),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("cm")).unwrap();
        Servers {
            dir: dir.to_owned(),
            a,
            b,
        }
    }

    /// `ssh://USER@127.0.0.1:PORT/DIR/folder` on the first server.
    pub fn url(&self, folder: &str) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            user(),
            self.a.port,
            self.dir.join(folder).display()
        )
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        if let Ok(rd) = std::fs::read_dir(self.dir.join("cm")) {
            for socket in rd.flatten() {
                let _ = Command::new("ssh")
                    .arg("-o")
                    .arg(format!("ControlPath={}", socket.path().display()))
                    .args(["-O", "exit", "x"])
                    .output();
            }
        }
    }
}
