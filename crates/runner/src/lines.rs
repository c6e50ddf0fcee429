//! What a worker prints, read in bounded pieces: a line is cut at
//! [`MAX_LINE_BYTES`] with a marker (the rest skipped up to its newline, so the
//! next line is read whole), and the log tail stored with a run keeps at most
//! [`TAIL_LINES`] lines of at most [`TAIL_LINE_BYTES`] each. A worker printing a
//! gigabyte without a newline costs the studio a megabyte, and every stored
//! run stays small enough to export.

use std::collections::VecDeque;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line read from a worker (protocol events are far smaller).
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// Lines of the worker's stderr (and non-protocol stdout) kept with a run.
pub const TAIL_LINES: usize = 40;
/// The longest line kept in the stored tail.
pub const TAIL_LINE_BYTES: usize = 4096;

/// A line read: its bytes (without the newline, at most the cap) and how
/// many bytes of it were skipped.
#[derive(Debug, PartialEq, Eq)]
pub struct CappedLine {
    pub bytes: Vec<u8>,
    pub skipped: u64,
}

impl CappedLine {
    /// The line as text (invalid UTF-8 replaced), with a marker when cut.
    pub fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let text = text.trim_end();
        if self.skipped == 0 {
            text.to_owned()
        } else {
            format!("{text} [… line cut: {} more bytes skipped]", self.skipped)
        }
    }
}

/// Reads one line of at most `cap` bytes; `None` at the end of the stream.
pub async fn read_capped<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    cap: usize,
) -> std::io::Result<Option<CappedLine>> {
    let mut line = CappedLine {
        bytes: Vec::new(),
        skipped: 0,
    };
    let mut any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(any.then_some(line));
        }
        any = true;
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        let room = cap.saturating_sub(line.bytes.len());
        let kept = chunk.len().min(room);
        line.bytes.extend_from_slice(&chunk[..kept]);
        line.skipped += (chunk.len() - kept) as u64;
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(line));
        }
    }
}

/// The last lines a worker printed, bounded in count and in bytes.
#[derive(Debug, Default)]
pub struct Tail {
    lines: VecDeque<String>,
}

impl Tail {
    pub fn push(&mut self, line: String) {
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(cut(line, TAIL_LINE_BYTES));
    }

    /// The tail as stored: lines joined by newlines.
    pub fn text(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

use trainbench_core::text::cut;

/// One piece of a stream split into lines by [`LineSplitter`].
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// A whole line, its newline included.
    Line(Vec<u8>),
    /// A line over the cap, dropped: how many bytes it had (newline included).
    Cut(u64),
}

impl Piece {
    /// Bytes of the stream this piece stands for.
    pub fn len(&self) -> u64 {
        match self {
            Piece::Line(l) => l.len() as u64,
            Piece::Cut(n) => *n,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Splits bytes that arrive in chunks (a journal read over ssh) into lines,
/// scanning each byte once and holding at most `cap` bytes of a line: a longer
/// line is dropped whole and reported as [`Piece::Cut`] with its length, so a
/// reader that counts offsets stays exact.
#[derive(Debug)]
pub struct LineSplitter {
    cap: usize,
    pending: Vec<u8>,
    /// Bytes of `pending` known to hold no newline.
    scanned: usize,
    /// Bytes dropped so far of a line over the cap.
    cutting: Option<u64>,
}

impl LineSplitter {
    pub fn new(cap: usize) -> LineSplitter {
        LineSplitter {
            cap,
            pending: Vec::new(),
            scanned: 0,
            cutting: None,
        }
    }

    pub fn push(&mut self, data: &[u8]) {
        self.pending.extend_from_slice(data);
    }

    /// The next whole line (or cut one); `None` until more bytes arrive.
    pub fn next_piece(&mut self) -> Option<Piece> {
        let newline = self.pending[self.scanned..]
            .iter()
            .position(|b| *b == b'\n')
            .map(|i| self.scanned + i);
        match (newline, self.cutting) {
            (Some(end), Some(dropped)) => {
                self.pending.drain(..=end);
                self.scanned = 0;
                self.cutting = None;
                Some(Piece::Cut(dropped + end as u64 + 1))
            }
            (Some(end), None) => {
                let line = self.pending.drain(..=end).collect();
                self.scanned = 0;
                Some(Piece::Line(line))
            }
            (None, cutting) => {
                if cutting.is_some() || self.pending.len() > self.cap {
                    self.cutting = Some(cutting.unwrap_or(0) + self.pending.len() as u64);
                    self.pending.clear();
                    self.scanned = 0;
                } else {
                    self.scanned = self.pending.len();
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], cap: usize) -> Vec<CappedLine> {
        let mut reader = tokio::io::BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        while let Some(l) = read_capped(&mut reader, cap).await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn long_lines_are_cut_and_the_next_line_is_read_whole() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nshort\nlast without newline");
        let got = lines(&input, 10).await;
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].bytes, vec![b'x'; 10]);
        assert_eq!(got[0].skipped, 90);
        assert!(got[0].text().contains("90 more bytes skipped"));
        assert_eq!(got[1].text(), "short");
        assert_eq!(got[2].bytes, b"last witho");
        assert_eq!(lines(b"", 10).await, vec![]);
        assert_eq!(lines(b"\n", 10).await[0].bytes, b"");
    }

    #[test]
    fn a_splitter_gives_lines_across_chunks_and_cuts_long_ones_keeping_offsets() {
        let mut s = LineSplitter::new(8);
        let mut pieces = Vec::new();
        let input: Vec<u8> = [&b"ab\ncd"[..], b"e\n", &[b'x'; 30], b"yy\nok\n"].concat();
        for chunk in input.chunks(5) {
            s.push(chunk);
            while let Some(p) = s.next_piece() {
                pieces.push(p);
            }
        }
        assert_eq!(
            pieces,
            vec![
                Piece::Line(b"ab\n".to_vec()),
                Piece::Line(b"cde\n".to_vec()),
                Piece::Cut(33),
                Piece::Line(b"ok\n".to_vec()),
            ]
        );
        let total: u64 = pieces.iter().map(Piece::len).sum();
        assert_eq!(total, input.len() as u64, "offsets stay exact");
        assert!(s.pending.is_empty());
    }

    #[test]
    fn the_tail_is_bounded_in_lines_and_bytes() {
        let mut tail = Tail::default();
        for i in 0..100 {
            tail.push(format!("{i} {}", "é".repeat(10_000)));
        }
        let text = tail.text();
        assert_eq!(text.lines().count(), TAIL_LINES);
        assert!(text.starts_with("60 "), "{}", &text[..10]);
        assert!(text.len() <= TAIL_LINES * (TAIL_LINE_BYTES + 40));
        assert!(text.contains("more bytes cut"));
    }
}
