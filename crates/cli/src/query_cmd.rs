//! `trainbench query`: the application's read-only query, printed as a
//! table (default), CSV or JSON.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use trainbench_app::query::{
    cell_text, csv_header, csv_row, query, query_each, Cell, QueryAnswer, QueryRequest,
};
use trainbench_core::text::escape_controls;

use crate::error::CliError;
use crate::output::stream::Out;

/// How the answer is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

impl Format {
    pub fn from_flags(csv: bool, json: bool) -> Format {
        match (csv, json) {
            (_, true) => Format::Json,
            (true, false) => Format::Csv,
            (false, false) => Format::Table,
        }
    }
}

/// The widest a table cell is printed; longer text is cut with `…`.
const CELL_WIDTH: usize = 40;

pub fn run(db: &Path, request: QueryRequest, format: Format) -> Result<ExitCode, CliError> {
    let (shown, truncated) = match format {
        Format::Table => {
            let answer = query(db, &request)?;
            print!("{}", table(&answer));
            (answer.rows.len(), answer.truncated)
        }
        Format::Csv | Format::Json => {
            let (_, shown, truncated) = stream(db, &request, format, Out::new())?;
            (shown, truncated)
        }
    };
    if truncated && format != Format::Json {
        eprintln!(
            "trainbench: only the first {shown} rows are shown; the query matches more (raise --max-rows, or add LIMIT or WHERE)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The answer as CSV or JSON (`to_csv` and `to_json` of the application
/// layer byte for byte), written a row at a time as the query reads them,
/// so that memory stays flat whatever `--max-rows` allows. Returns the rows
/// written and whether the row limit left some out, after the writer.
pub(crate) fn stream<W: Write>(
    db: &Path,
    request: &QueryRequest,
    format: Format,
    mut out: Out<W>,
) -> Result<(W, usize, bool), CliError> {
    let mut rows = 0usize;
    let json = format == Format::Json;
    let streamed = {
        // `start` and `each` take turns with the one output.
        let out = std::cell::RefCell::new(&mut out);
        query_each(
            db,
            request,
            |columns| {
                let mut out = out.borrow_mut();
                if json {
                    out.text("{\"columns\":")?;
                    out.json(&serde_json::json!(columns))?;
                    out.text(",\"rows\":[")
                } else {
                    out.text(&csv_header(columns))
                }
            },
            |row| {
                let mut out = out.borrow_mut();
                rows += 1;
                if !json {
                    return out.text(&csv_row(&row));
                }
                if rows > 1 {
                    out.text(",")?;
                }
                out.json(&serde_json::json!(row))
            },
        )
    };
    let ended = streamed.and_then(|truncated| {
        if json {
            out.text(&format!("],\"truncated\":{truncated}}}\n"))?;
        }
        Ok(truncated)
    });
    match ended {
        Ok(truncated) => Ok((out.finish()?, rows, truncated)),
        Err(e) => Err(out.failed(e)),
    }
}

/// A cell as the table shows it on one line: control characters (tab and
/// line break too) escaped, cut to
/// [`CELL_WIDTH`], NULL as `-`.
fn shown(cell: &Cell) -> String {
    if *cell == Cell::Null {
        return "-".to_owned();
    }
    let text = escape_controls(&cell_text(cell))
        .replace('\t', "\\t")
        .replace('\n', "\\n");
    if text.chars().count() > CELL_WIDTH {
        let cut: String = text.chars().take(CELL_WIDTH - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Columns padded to their widest cell, numbers to the right; a line under
/// the header; the count of rows at the end.
fn table(answer: &QueryAnswer) -> String {
    let header: Vec<String> = answer
        .columns
        .iter()
        .map(|c| escape_controls(c).into_owned())
        .collect();
    let cells: Vec<Vec<String>> = answer
        .rows
        .iter()
        .map(|r| r.iter().map(shown).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |texts: &[String], right: &dyn Fn(usize) -> bool| {
        let parts: Vec<String> = texts
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (t, w))| {
                if right(i) {
                    format!("{t:>w$}")
                } else {
                    format!("{t:<w$}")
                }
            })
            .collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = line(&header, &|_| false);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(&rule, &|_| false));
    for (row, texts) in answer.rows.iter().zip(&cells) {
        let numeric = |i: usize| matches!(row.get(i), Some(Cell::Integer(_) | Cell::Real(_)));
        out.push_str(&line(texts, &numeric));
    }
    let n = answer.rows.len();
    out.push_str(&format!("({n} row{})\n", if n == 1 { "" } else { "s" }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_aligns_numbers_right_and_shows_null_as_a_dash() {
        let answer = QueryAnswer {
            columns: vec!["model".into(), "throughput".into()],
            rows: vec![
                vec![Cell::Text("resnet_mini".into()), Cell::Real(412.5)],
                vec![Cell::Text("vit\ttiny".into()), Cell::Null],
            ],
            truncated: false,
        };
        assert_eq!(
            table(&answer),
            "model        throughput\n-----------  ----------\nresnet_mini       412.5\nvit\\ttiny    -\n(2 rows)\n"
        );
    }
}
