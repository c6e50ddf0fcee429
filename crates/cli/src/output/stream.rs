//! A document written to standard output a piece at a time, so that a
//! listing of any length is never held whole in memory: buffered writes, a
//! closed pipe (`trainbench runs --json | head`) ending the process quietly
//! as a shell tool ends (128 + SIGPIPE), and a failure once part of the
//! document is out said on stderr only ([`CliError::Unfinished`]).

use std::io::{BufWriter, StdoutLock, Write};

use serde_json::Value;

use crate::error::CliError;

/// What is buffered before standard output is written.
const BUFFER: usize = 64 * 1024;

/// Standard output that ends the process quietly (exit 141) when the
/// reader has gone, as `println!` does here (see `main`).
pub struct Stdout(StdoutLock<'static>);

impl Stdout {
    pub fn new() -> Stdout {
        Stdout(std::io::stdout().lock())
    }
}

fn quiet_if_gone<T>(r: std::io::Result<T>) -> std::io::Result<T> {
    if let Err(e) = &r {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
    }
    r
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        quiet_if_gone(self.0.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        quiet_if_gone(self.0.flush())
    }
}

/// One document on standard output (or in `W`), written as it is made.
pub struct Out<W: Write = Stdout> {
    w: BufWriter<W>,
    began: bool,
}

impl Out {
    pub fn new() -> Out {
        Out::to(Stdout::new())
    }
}

impl<W: Write> Out<W> {
    pub fn to(w: W) -> Out<W> {
        Out {
            w: BufWriter::with_capacity(BUFFER, w),
            began: false,
        }
    }

    /// Text as it is.
    pub fn text(&mut self, s: &str) -> Result<(), CliError> {
        self.began = true;
        self.w.write_all(s.as_bytes()).map_err(unfinished)
    }

    /// A value as compact JSON (as `Value`'s `Display` writes it).
    pub fn json(&mut self, v: &Value) -> Result<(), CliError> {
        self.began = true;
        serde_json::to_writer(&mut self.w, v).map_err(|e| unfinished(e.into()))
    }

    /// The writer under the document, for a CSV written into it.
    pub fn raw(&mut self) -> &mut BufWriter<W> {
        self.began = true;
        &mut self.w
    }

    /// Everything buffered written out; the writer under it.
    pub fn finish(self) -> Result<W, CliError> {
        self.w.into_inner().map_err(|e| unfinished(e.into_error()))
    }

    /// `e` as the command's error: once part of the document is out, the
    /// error is said on stderr only, so nothing follows the part on stdout.
    pub fn failed(&mut self, e: CliError) -> CliError {
        if !self.began {
            return e;
        }
        // What was made before the failure goes out with it.
        let _ = self.w.flush();
        match e {
            CliError::BadInput { message, .. } | CliError::Failed(message) => {
                CliError::Unfinished(message)
            }
            unfinished @ CliError::Unfinished(_) => unfinished,
        }
    }
}

fn unfinished(e: std::io::Error) -> CliError {
    CliError::Unfinished(format!("standard output: {e}"))
}

/// Bytes written into a JSON string's body as `serde_json` escapes them
/// (`"`, `\`, control characters), for a long text streamed as one JSON
/// string. Bytes of UTF-8 above ASCII pass as they are, so a character
/// split between two writes is kept whole.
pub struct JsonStringBody<W: Write>(pub W);

impl<W: Write> Write for JsonStringBody<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut from = 0;
        for (i, &b) in buf.iter().enumerate() {
            let escaped: Option<&[u8]> = match b {
                b'"' => Some(b"\\\""),
                b'\\' => Some(b"\\\\"),
                b'\n' => Some(b"\\n"),
                b'\r' => Some(b"\\r"),
                b'\t' => Some(b"\\t"),
                0x08 => Some(b"\\b"),
                0x0c => Some(b"\\f"),
                0x00..=0x1f => None,
                _ => continue,
            };
            self.0.write_all(&buf[from..i])?;
            match escaped {
                Some(e) => self.0.write_all(e)?,
                None => write!(self.0, "\\u{b:04x}")?,
            }
            from = i + 1;
        }
        self.0.write_all(&buf[from..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_body_is_escaped_as_serde_json_escapes_it() {
        let mut text: String = (0u8..0x80).map(char::from).collect();
        text.push_str("\"quoted\", back\\slash, é, 漢字, 🙂\r\n");
        let mut body = JsonStringBody(Vec::new());
        // In pieces that split characters of several bytes.
        for piece in text.as_bytes().chunks(3) {
            body.write_all(piece).unwrap();
        }
        let ours = format!("\"{}\"", String::from_utf8(body.0).unwrap());
        assert_eq!(ours, serde_json::to_string(&text).unwrap());
    }
}
