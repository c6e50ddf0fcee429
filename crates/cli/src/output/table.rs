//! Columns sized to what they hold: a long configuration label widens its
//! column instead of pushing the columns after it out of line.

/// How a column's cells sit in it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// The table as lines: each column as wide as its widest cell (the header
/// included, counted in characters), two spaces between columns, no
/// trailing spaces.
pub fn lines(header: &[&str], align: &[Align], rows: &[Vec<String>]) -> Vec<String> {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
            .chain(std::iter::once(header[i].chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i > 0 {
                out.push_str("  ");
            }
            match align[i] {
                Align::Left => {
                    out.push_str(cell);
                    out.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(cell);
                }
            }
        }
        out.trim_end().to_owned()
    };
    std::iter::once(line(header.to_vec()))
        .chain(
            rows.iter()
                .map(|r| line(r.iter().map(String::as_str).collect())),
        )
        .collect()
}

/// [`lines`], printed.
pub fn print(header: &[&str], align: &[Align], rows: &[Vec<String>]) {
    for l in lines(header, align, rows) {
        println!("{l}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_label_widens_its_column_and_the_rest_stay_in_line() {
        let rows = vec![
            vec!["1".into(), "tch resnet_mini ×1 b64".into(), "618.7".into()],
            vec![
                "12".into(),
                "pytorch@kit-pytorch vit_base_patch16_224 amp-bf16 compile=on ×1 b64 synthetic"
                    .into(),
                "2423.4".into(),
            ],
        ];
        let out = lines(
            &["run", "configuration", "samples/s"],
            &[Align::Right, Align::Left, Align::Right],
            &rows,
        );
        let ends: Vec<usize> = out.iter().map(|l| l.chars().count()).collect();
        assert!(
            ends.iter().all(|&e| e == ends[0]),
            "every line ends in the same column: {out:#?}"
        );
        assert!(
            out[1].starts_with("  1  tch resnet_mini ×1 b64 "),
            "{}",
            out[1]
        );
    }
}
