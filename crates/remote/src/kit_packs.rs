//! The kit packed once: the gzipped tar sent to hosts is kept in the
//! studio's home (`kit-packs/SHA.tar.gz`, SHA the SHA-256 of the kit's
//! manifest, so one name is one kit's files) beside its own SHA-256. Adding
//! another host, or a host's peers, then sends the same bytes without
//! copying, hashing and compressing the kit again (about 2 s of CPU for a
//! debug build's 100 MB program). Only the newest kit's pack is kept; a
//! pack that no longer matches its sum is made again, and a pack that
//! cannot be kept is only made again next time.

use std::path::Path;

use crate::agent::sha256_hex as hex;

/// The pack of the kit whose manifest is `manifest`: the one kept in `dir`,
/// or `pack()`'s, then kept there.
pub(crate) fn kept_or<E>(
    dir: &Path,
    manifest: &str,
    pack: impl FnOnce() -> Result<Vec<u8>, E>,
) -> Result<Vec<u8>, E> {
    let name = hex(manifest.as_bytes());
    let file = dir.join(format!("{name}.tar.gz"));
    let sum = dir.join(format!("{name}.tar.gz.sha256"));
    if let (Ok(tar), Ok(kept)) = (std::fs::read(&file), std::fs::read_to_string(&sum)) {
        if hex(&tar) == kept.trim() {
            return Ok(tar);
        }
    }
    let tar = pack()?;
    keep(dir, &file, &sum, &tar);
    Ok(tar)
}

/// `tar` kept as `file` with its sum in `sum`, every other kit's pack in
/// `dir` removed. Whole files or none (a reader finding a pack without its
/// sum, or with another's, makes it again).
fn keep(dir: &Path, file: &Path, sum: &Path, tar: &[u8]) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    if trainbench_files::write_atomic("kit", file, tar).is_ok() {
        let _ = trainbench_files::write_atomic("kit", sum, hex(tar).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packs(dir: &Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |r| r.count())
    }

    #[test]
    fn a_kit_is_packed_once_a_changed_pack_again_and_only_the_newest_kept() {
        let dir = std::env::temp_dir().join(format!("tb-kit-packs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let packed = std::cell::Cell::new(0);
        let pack = |bytes: &[u8]| {
            packed.set(packed.get() + 1);
            Ok::<_, ()>(bytes.to_vec())
        };
        assert_eq!(kept_or(&dir, "kit A", || pack(b"A1")), Ok(b"A1".to_vec()));
        // Kept: the same kit is not packed again.
        assert_eq!(kept_or(&dir, "kit A", || pack(b"A2")), Ok(b"A1".to_vec()));
        assert_eq!(packed.get(), 1);
        // A pack changed on disk no longer matches its sum: packed again.
        let file = dir.join(format!("{}.tar.gz", hex(b"kit A")));
        std::fs::write(&file, b"cut short").unwrap();
        assert_eq!(kept_or(&dir, "kit A", || pack(b"A3")), Ok(b"A3".to_vec()));
        assert_eq!(packed.get(), 2);
        // Another kit (a new build): packed, and the older pack removed.
        assert_eq!(kept_or(&dir, "kit B", || pack(b"B1")), Ok(b"B1".to_vec()));
        assert_eq!(packs(&dir), 2, "one pack and its sum");
        assert!(!file.exists());
        // A pack that fails is not kept.
        assert_eq!(kept_or(&dir, "kit C", || Err::<Vec<u8>, ()>(())), Err(()));
        assert_eq!(kept_or(&dir, "kit B", || pack(b"B2")), Ok(b"B1".to_vec()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
