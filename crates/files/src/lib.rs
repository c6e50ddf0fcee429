//! Files the studio writes and reads, made safe in one place:
//!
//! - [`write_atomic`]: a file is written whole or not at all — a temporary
//!   file opened exclusively (`O_EXCL`) beside the target, fsynced, renamed
//!   over it, and the folder fsynced — so a crash, a full disk or a second
//!   writer never leaves half a file or harms the old one
//!   ([`write_atomic_with`]: the same, the content made as it is written);
//! - [`refuse_sqlite`]: no export may replace a SQLite database (the open
//!   store, its `-wal`/`-shm`/`-journal`, or any other), since one mistyped
//!   `-o` would destroy every stored run;
//! - [`read_bounded`]: imports read regular files only, and at most a stated
//!   number of bytes, so `/dev/zero`, a FIFO, a folder or `/proc/…` gives a
//!   clear error at once instead of hanging or filling memory;
//! - [`FileLock`]: an exclusive lock around a read-modify-write of a small
//!   JSON file (the host list, the settings), so two processes editing it at
//!   once both keep their change; tried without waiting, or shared (the
//!   users of an environment, which its removal must not pass);
//! - [`bytes_under`]: what a folder's regular files take (links not followed);
//! - [`private_dir`]: a new folder of this process's own (mode 0700, made
//!   here, never one that was there) in a shared temporary folder;
//! - [`OwnedDir`]: a folder removed with everything in it when dropped;
//! - [`places`]: where the studio's home, database and settings file are.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub mod places;
#[cfg(test)]
mod tests;

/// The first 16 bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A path the caller's field may not name, with what is allowed.
    #[error("{field} = {value:?} is not allowed: {allowed}")]
    Invalid {
        field: &'static str,
        value: String,
        allowed: String,
    },
    /// The system refused a read or write (no space, no permission, …).
    #[error("{what} {path}: {message}")]
    Io {
        what: &'static str,
        path: String,
        message: String,
    },
}

impl FileError {
    /// The field at fault, for errors that name one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            FileError::Invalid { field, .. } => Some(field),
            FileError::Io { .. } => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, FileError>;

fn invalid(field: &'static str, path: &Path, allowed: impl Into<String>) -> FileError {
    FileError::Invalid {
        field,
        value: path.display().to_string(),
        allowed: allowed.into(),
    }
}

fn io(what: &'static str, path: &Path, e: &std::io::Error) -> FileError {
    FileError::Io {
        what,
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// True when `path` is a file that begins with SQLite's header.
pub fn is_sqlite_file(path: &Path) -> bool {
    let mut head = [0u8; 16];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == SQLITE_HEADER)
}

/// The database a `-wal`, `-shm` or `-journal` file belongs to, if `path`
/// names one.
fn database_of_sidecar(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    ["-wal", "-shm", "-journal"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .filter(|base| !base.is_empty())
        .map(|base| path.with_file_name(base))
}

/// The same file, through symlinks and `..`; the path itself when it cannot
/// be resolved (a file not made yet: its folder resolved).
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            dir.canonicalize()
                .map_or_else(|_| path.to_path_buf(), |d| d.join(name))
        }
        _ => path.to_path_buf(),
    }
}

/// Refuses (field `field`) a `path` that is a SQLite database or one of its
/// `-wal`/`-shm`/`-journal` files, or is — through links — one of the
/// `protected` databases or their side files, which may not exist yet.
pub fn refuse_sqlite(field: &'static str, path: &Path, protected: &[&Path]) -> Result<()> {
    let target = resolved(path);
    let refuse = |why: String| {
        Err(invalid(
            field,
            path,
            format!("a new file or an export, not {why}: exports never replace a database"),
        ))
    };
    for db in protected {
        let db = resolved(db);
        let mut names = vec![db.clone()];
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut s = db.clone().into_os_string();
            s.push(suffix);
            names.push(PathBuf::from(s));
        }
        if names.contains(&target) {
            return refuse(format!("the studio's open database ({})", db.display()));
        }
    }
    if is_sqlite_file(&target) {
        return refuse("a SQLite database".into());
    }
    if let Some(db) = database_of_sidecar(&target).filter(|d| is_sqlite_file(d)) {
        return refuse(format!("a file of the SQLite database {}", db.display()));
    }
    Ok(())
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` whole or not at all (see the crate's notes).
/// `field` names the path in errors (`output`, `database`, …).
pub fn write_atomic(field: &'static str, path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(field, path, |w| w.write_all(bytes))?
        .map_err(|e| io("cannot write", path, &e))?;
    Ok(())
}

/// [`write_atomic`] with the content made as it is written, for a file
/// too large to hold in memory first: `fill` writes into the temporary file
/// (buffered), and `path` is replaced only once `fill` returned `Ok` and
/// the file is on disk. Returns the bytes written; the inner error is
/// `fill`'s, which leaves `path` as it was.
pub fn write_atomic_with<E>(
    field: &'static str,
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> Result<std::result::Result<u64, E>> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(invalid(
            field,
            path,
            format!(
                "a file in an existing folder ({} does not exist)",
                dir.display()
            ),
        ));
    }
    let name = path
        .file_name()
        .ok_or_else(|| invalid(field, path, "a file name, not a folder"))?;
    if path.is_dir() {
        return Err(invalid(field, path, "a file name, not a folder"));
    }
    let (tmp_path, mut file) = loop {
        let candidate = dir.join(format!(
            ".{}.partial-{}-{}",
            name.to_string_lossy(),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        // O_EXCL: never write through a file (or link) someone put there.
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => break (candidate, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io("cannot write", path, &e)),
        }
    };
    let mut buffered = std::io::BufWriter::new(&mut file);
    if let Err(e) = fill(&mut buffered) {
        drop(buffered);
        drop(file);
        let _ = std::fs::remove_file(&tmp_path);
        return Ok(Err(e));
    }
    let flushed = buffered.flush();
    drop(buffered);
    let written = flushed
        .and_then(|()| file.sync_all())
        .and_then(|()| file.metadata())
        .and_then(|meta| std::fs::rename(&tmp_path, path).map(|()| meta.len()));
    drop(file);
    let bytes = match written {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp_path);
            return Err(io("cannot write", path, &e));
        }
    };
    // The rename itself survives a power cut only once the folder is synced;
    // some file systems cannot sync a folder, which is no reason to fail.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(Ok(bytes))
}

/// What a path that is not a regular file is, in words.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads at most `max` bytes of the regular file at `path` (field `field`
/// in errors, `what` for what the file should be). Folders, pipes, devices,
/// sockets and the kernel's files (`/proc`, `/sys`, `/dev`) are refused
/// before anything is read, so nothing blocks and memory stays flat.
pub fn read_bounded(field: &'static str, path: &Path, what: &str, max: u64) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| {
        invalid(
            field,
            path,
            format!("{what}, a readable regular file ({e})"),
        )
    })?;
    if !meta.is_file() {
        return Err(invalid(
            field,
            path,
            format!("{what}, a regular file (this is {})", kind_of(&meta)),
        ));
    }
    let real = resolved(path);
    if ["/proc", "/sys", "/dev"]
        .iter()
        .any(|k| real.starts_with(k))
    {
        return Err(invalid(
            field,
            path,
            format!("{what}, a regular file (this is one of the kernel's files)"),
        ));
    }
    let too_big = |size: u64| {
        invalid(
            field,
            path,
            format!("{what} of at most {max} bytes (it has {size})"),
        )
    };
    if meta.len() > max {
        return Err(too_big(meta.len()));
    }
    let file = File::open(path).map_err(|e| io("cannot read", path, &e))?;
    // The same file as stat saw: a regular file (not swapped for a pipe).
    let opened = file.metadata().map_err(|e| io("cannot read", path, &e))?;
    if !opened.is_file() {
        return Err(invalid(
            field,
            path,
            format!("{what}, a regular file (this is {})", kind_of(&opened)),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len()).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io("cannot read", path, &e))?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// A lock on `<file>.lock`, held until dropped. Exclusive: read, change and
/// write `file` while holding it and no other process's change is lost.
/// Shared: many hold it at once (the users of one environment), and none of
/// them while another process holds it exclusively (the one removing it).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Waits for the exclusive lock beside `file` (its folder made if needed).
    pub fn exclusive(file: &Path) -> Result<FileLock> {
        let (lock, lock_path) = open_lock(file)?;
        lock.lock().map_err(|e| io("cannot lock", &lock_path, &e))?;
        Ok(FileLock { _file: lock })
    }

    /// The exclusive lock beside `file` if nobody holds it in any way now;
    /// `None` when another holder has it (nothing waits).
    pub fn try_exclusive(file: &Path) -> Result<Option<FileLock>> {
        let (lock, lock_path) = open_lock(file)?;
        match lock.try_lock() {
            Ok(()) => Ok(Some(FileLock { _file: lock })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(io("cannot lock", &lock_path, &e)),
        }
    }

    /// Waits for a shared lock beside `file` (held with other shared
    /// holders; waits only while an exclusive holder has it).
    pub fn shared(file: &Path) -> Result<FileLock> {
        let (lock, lock_path) = open_lock(file)?;
        lock.lock_shared()
            .map_err(|e| io("cannot lock", &lock_path, &e))?;
        Ok(FileLock { _file: lock })
    }
}

/// `<file>.lock` opened (made if needed, its folder too), not yet locked.
fn open_lock(file: &Path) -> Result<(File, PathBuf)> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io("cannot make", dir, &e))?;
    }
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| io("cannot open", &lock_path, &e))?;
    Ok((lock, lock_path))
}

/// Bytes of the regular files under `dir`, folders walked, symbolic links
/// neither followed nor counted (a hard-linked file counts in full).
pub fn bytes_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// A new folder under `base` named `{prefix}-{n}` for the first free `n`,
/// made here with mode 0700, never one that was there: in a shared
/// temporary folder another user could make one of a predictable name first
/// and place files or links in it for the studio to write through or load.
pub fn private_dir(base: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let mut last = None;
    for n in 0..64 {
        let dir = base.join(format!("{prefix}-{n}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no name left")))
}

/// A folder removed, with everything in it, when this is dropped (an error
/// or a panic on the way included). It does not make the folder.
#[derive(Debug)]
pub struct OwnedDir(PathBuf);

impl OwnedDir {
    pub fn new(path: PathBuf) -> OwnedDir {
        OwnedDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for OwnedDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for OwnedDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for OwnedDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
