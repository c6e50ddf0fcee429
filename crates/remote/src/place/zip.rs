//! A zip archive of the kit, stored (not compressed), with each file's
//! Unix mode: the package a Ray cluster unpacks as a job's working folder
//! (Ray restores the mode, so `bin/trainbench` stays executable).

/// `(path in the archive, bytes, Unix mode)` each, into one archive.
pub(crate) fn stored_zip(files: &[(String, Vec<u8>, u32)]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let small = |n: usize, what: &str| {
        u32::try_from(n)
            .map_err(|_| format!("the kit's {what} is over 4 GiB (zip64 is not written)"))
    };
    for (name, bytes, mode) in files {
        let crc = crc32fast::hash(bytes);
        let size = small(bytes.len(), name)?;
        let offset = small(out.len(), "archive")?;
        let name_len = u16::try_from(name.len()).map_err(|_| format!("{name}: too long a name"))?;
        // Local header: version 2.0, no flags, stored, 1980-01-01 00:00.
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&0x21u16.to_le_bytes());
        for v in [crc, size, size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(bytes);
        // Central entry: made on Unix (3), the mode in the upper 16 bits.
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&((3u16 << 8) | 20).to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&0x21u16.to_le_bytes());
        for v in [crc, size, size] {
            central.extend_from_slice(&v.to_le_bytes());
        }
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&[0; 8]);
        central.extend_from_slice(&((0o100_000 | mode) << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let count =
        u16::try_from(files.len()).map_err(|_| "the kit has over 65535 files".to_owned())?;
    let central_at = small(out.len(), "archive")?;
    let central_len = small(central.len(), "index")?;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&central_len.to_le_bytes());
    out.extend_from_slice(&central_at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's zipfile (what Ray unpacks with) reads the archive back:
    /// names, bytes and modes.
    #[test]
    fn pythons_zipfile_reads_back_names_bytes_and_modes() {
        let zip = stored_zip(&[
            ("bin/tool".into(), b"#!/bin/sh\necho hi\n".to_vec(), 0o755),
            ("share/a b.py".into(), vec![0u8, 1, 2, 255], 0o644),
        ])
        .unwrap();
        let path = std::env::temp_dir().join(format!("tb-zip-{}.zip", std::process::id()));
        std::fs::write(&path, &zip).unwrap();
        let script = "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nfor i in z.infolist():\n    print(i.filename, list(z.read(i))[:4], oct(i.external_attr >> 16))\n";
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(&path)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            text,
            "bin/tool [35, 33, 47, 98] 0o100755\nshare/a b.py [0, 1, 2, 255] 0o100644\n"
        );
    }
}
