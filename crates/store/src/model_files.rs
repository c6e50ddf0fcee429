//! Copies of the model files runs trained (`model_files`), by SHA-256: the
//! bytes are kept as read, to be shown and compared later, never executed.

use rusqlite::{params, OptionalExtension};

use crate::{now_unix_ms, Result, Store};

/// A model file as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptModelFile {
    pub sha256: String,
    /// `PATH.py:FUNCTION` as the first run that read it named it.
    pub reference: String,
    pub bytes: Vec<u8>,
    pub stored_unix_ms: i64,
}

impl Store {
    /// Keeps `bytes` under `sha256` (a copy already kept stays as it is).
    pub fn keep_model_file(&self, sha256: &str, reference: &str, bytes: &[u8]) -> Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO model_files (sha256, reference, bytes, stored_unix_ms)
             VALUES (?1, ?2, ?3, ?4)",
            params![sha256, reference, bytes, now_unix_ms()],
        )?;
        Ok(())
    }

    /// The kept copy of the model file with `sha256`, if any.
    pub fn model_file(&self, sha256: &str) -> Result<Option<KeptModelFile>> {
        Ok(self
            .conn
            .query_row(
                "SELECT sha256, reference, bytes, stored_unix_ms FROM model_files WHERE sha256 = ?1",
                [sha256],
                |r| {
                    Ok(KeptModelFile {
                        sha256: r.get(0)?,
                        reference: r.get(1)?,
                        bytes: r.get(2)?,
                        stored_unix_ms: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[test]
    fn a_model_file_is_kept_once_under_its_hash() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.model_file("ab").unwrap(), None);
        store
            .keep_model_file("ab", "/w/m.py:build", b"def build(): ...")
            .unwrap();
        store
            .keep_model_file("ab", "/elsewhere/m.py:build", b"other")
            .unwrap();
        let kept = store.model_file("ab").unwrap().unwrap();
        assert_eq!(kept.reference, "/w/m.py:build");
        assert_eq!(kept.bytes, b"def build(): ...");
    }
}
