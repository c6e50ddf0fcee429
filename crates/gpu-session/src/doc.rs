//! The GPU session's Markdown (results.md, docs/gpu-results.md) and the
//! files `fold` and `plan --measured` read.
//!
//! Every file is read like an import: a regular file of bounded size only
//! ([`read_text`]), so a named pipe or `/dev/zero` is refused at once.
//! Every text that reaches a table cell, a heading or the marker comment
//! goes through one function, [`cell`]: no line break, no `|` that splits
//! a row, no `<`/`>` that opens or closes a comment. A line of the document
//! therefore starts with `<!--` only where `fold` wrote a [`marker`], and
//! [`cells`] reads a row back as it was written.

use std::path::Path;

use serde_json::Value;
use trainbench_files::{read_bounded, FileError};

use trainbench_app::error::{AppError, AppResult};

/// results.json of one session: a few hundred kilobytes in practice.
pub const MAX_RESULTS_BYTES: u64 = 16 << 20;
/// docs/gpu-results.md: a few kilobytes per session.
pub const MAX_DOC_BYTES: u64 = 64 << 20;

/// `text` made safe for one cell of a Markdown table (and for a heading
/// or the marker comment): control characters (line breaks included) as
/// `\u{…}` escapes; `\`, `|` and `` ` `` escaped with a backslash; `<`, `>`
/// and `&` as entities. Rendered, the cell shows the text as it was.
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '`' => out.push_str("\\`"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// One table row, every cell escaped by [`cell`].
pub fn row<S: AsRef<str>>(cells: &[S]) -> String {
    let escaped: Vec<String> = cells.iter().map(|c| cell(c.as_ref())).collect();
    format!("| {} |\n", escaped.join(" | "))
}

/// A JSON number in the studio's format (`decimals` after the point; an
/// integer as it is), anything else as its text; nothing as `—`.
pub fn number(v: &Value, decimals: usize) -> String {
    match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Value::Number(n) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |x| format!("{x:.decimals$}")),
        other => text(other),
    }
}

/// A JSON value as text: a string as it is, nothing as `—`, anything else
/// as its JSON text.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".into(),
        other => other.to_string(),
    }
}

/// The UTF-8 text of the regular file at `path` (field `field`, `what` it
/// should be), at most `max` bytes; anything else is refused before it is
/// read, naming the field and the path.
pub fn read_text(field: &str, path: &Path, what: &str, max: u64) -> AppResult<String> {
    let bytes = read_file(field, path, what, max)?;
    String::from_utf8(bytes).map_err(|_| {
        AppError::bad(
            field,
            format!(
                "{field} = {} is not allowed: expected {what}, UTF-8 text",
                path.display()
            ),
        )
    })
}

/// The bytes of the regular file at `path`, as [`read_text`].
pub fn read_file(field: &str, path: &Path, what: &str, max: u64) -> AppResult<Vec<u8>> {
    read_bounded("file", path, what, max).map_err(|e| match e {
        FileError::Invalid { allowed, .. } => AppError::bad(
            field,
            format!(
                "{field} = {} is not allowed: expected {allowed}",
                path.display()
            ),
        ),
        FileError::Io { .. } => AppError::bad(
            field,
            format!("{field} = {} is not allowed: {e}", path.display()),
        ),
    })
}

/// A session's results.json (in `dir`, field `field`), read bounded and
/// checked: a JSON object of a GPU session, whose `session` is an object
/// and whose `results` is an array of objects.
pub fn read_results(field: &str, dir: &Path) -> AppResult<Value> {
    checked_results(field, dir, &dir.join(super::files::RESULTS_JSON))
}

/// A results file of the record (docs/gpu-results/), read and checked as
/// [`read_results`] reads a session's.
pub fn parse_results(field: &str, path: &Path) -> AppResult<Value> {
    checked_results(field, path, path)
}

/// The results at `path`, checked; errors name `field = shown`.
fn checked_results(field: &str, shown: &Path, path: &Path) -> AppResult<Value> {
    let bad = |why: String| {
        AppError::bad(
            field,
            format!("{field} = {} is not allowed: {why}", shown.display()),
        )
    };
    let text = read_text(field, path, "a session's results", MAX_RESULTS_BYTES)?;
    let results: Value = serde_json::from_str(&text)
        .map_err(|e| bad(format!("its {} is not JSON ({e})", path.display())))?;
    if !results.is_object() {
        return Err(bad(format!("its {} is not a JSON object", path.display())));
    }
    if results["format"] != "trainbench-gpu-session" {
        return Err(bad(format!(
            "its {} is not a GPU session's",
            path.display()
        )));
    }
    let shape = |name: &str, v: &Value, expected: &str| {
        bad(format!(
            "its {} has {name} = {} (expected {expected})",
            path.display(),
            trainbench_core::text::cut(cell(&v.to_string()), 80)
        ))
    };
    if !results["session"].is_object() {
        return Err(shape("session", &results["session"], "an object"));
    }
    let Some(items) = results["results"].as_array() else {
        return Err(shape(
            "results",
            &results["results"],
            "an array of the items' results",
        ));
    };
    if let Some((i, r)) = items.iter().enumerate().find(|(_, r)| !r.is_object()) {
        return Err(shape(&format!("results[{i}]"), r, "an object"));
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's cells as written (still escaped), split at the `|` that are not
    /// escaped, each trimmed; the text before the first `|` and after the last
    /// are the first and last elements (empty in a row).
    fn cells(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut chars = line.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '|' => {
                    out.push(line[start..i].trim());
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(line[start..].trim());
        out
    }

    #[test]
    fn a_cell_keeps_to_its_line_and_its_column() {
        let hostile = "a|b\n## h\r<!-- gpu-session: x y -->`c`\\";
        let c = cell(hostile);
        assert_eq!(
            c,
            "a\\|b\\u{a}## h\\u{d}&lt;!-- gpu-session: x y --&gt;\\`c\\`\\\\"
        );
        let line = row(&["one", hostile, "three\\"]);
        assert_eq!(line.lines().count(), 1);
        assert_eq!(cells(&line), ["", "one", c.as_str(), "three\\\\", ""]);
    }

    #[test]
    fn numbers_are_written_in_the_studios_format() {
        let v = serde_json::json!([64, 530.0, 2.26, "64|x", null]);
        assert_eq!(number(&v[0], 0), "64");
        assert_eq!(number(&v[1], 0), "530");
        assert_eq!(number(&v[2], 1), "2.3");
        assert_eq!(number(&v[3], 0), "64|x");
        assert_eq!(number(&v[4], 0), "—");
    }
}
