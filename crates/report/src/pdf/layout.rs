//! The layout engine: places text, rules, shaded bands and charts on A4 pages
//! as drawing operations (`Op`), wrapping text with the font's own advance
//! widths and repeating table headers across page breaks. It knows nothing of
//! the report's contents; `super::render` draws what it placed.

use ab_glyph::{Font as _, FontRef};

use crate::{fonts, ReportError};

pub(super) const PAGE_W: f32 = 595.28;
pub(super) const PAGE_H: f32 = 841.89;
pub(super) const MARGIN: f32 = 50.0;
const BODY: f32 = PAGE_W - 2.0 * MARGIN;
const BOTTOM: f32 = PAGE_H - MARGIN - 14.0;

/// One drawing operation, in points from the page's top left corner.
#[derive(Debug, Clone)]
pub(super) enum Op {
    Text {
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        grey: bool,
        text: String,
    },
    Rect {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        shade: u8,
    },
    Line {
        x1: f32,
        y1: f32,
        x2: f32,
        y2: f32,
    },
    Svg {
        tree: Box<usvg::Tree>,
        x: f32,
        y: f32,
        w: f32,
        h: f32,
    },
}

/// Pages being laid out, and the cursor: how far down the last page the
/// content has reached.
pub(super) struct Layout {
    pages: Vec<Vec<Op>>,
    y: f32,
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

fn font_err<E: std::fmt::Debug>(e: E) -> ReportError {
    ReportError::Font(format!("{e:?}"))
}

impl Layout {
    /// An empty first page, with the shipped fonts for measuring text.
    pub(super) fn new() -> Result<Layout, ReportError> {
        Ok(Layout {
            pages: vec![Vec::new()],
            y: MARGIN,
            regular: FontRef::try_from_slice(fonts::REGULAR).map_err(font_err)?,
            bold: FontRef::try_from_slice(fonts::BOLD).map_err(font_err)?,
        })
    }

    fn width(&self, text: &str, size: f32, bold: bool) -> f32 {
        let f = if bold { &self.bold } else { &self.regular };
        let upem = f.units_per_em().unwrap_or(2048.0);
        text.chars()
            .map(|c| f.h_advance_unscaled(f.glyph_id(c)))
            .sum::<f32>()
            * size
            / upem
    }

    /// Greedy word wrap; words longer than a line are broken by characters.
    fn wrap(&self, text: &str, size: f32, bold: bool, width: f32) -> Vec<String> {
        let mut lines = Vec::new();
        for para in text.split('\n') {
            let mut line = String::new();
            for word in para.split(' ') {
                let candidate = if line.is_empty() {
                    word.to_string()
                } else {
                    format!("{line} {word}")
                };
                if self.width(&candidate, size, bold) <= width {
                    line = candidate;
                    continue;
                }
                if !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                }
                let mut piece = String::new();
                for c in word.chars() {
                    piece.push(c);
                    if self.width(&piece, size, bold) > width && piece.chars().count() > 1 {
                        piece.pop();
                        lines.push(std::mem::take(&mut piece));
                        piece.push(c);
                    }
                }
                line = piece;
            }
            lines.push(line);
        }
        lines
    }

    fn page(&mut self) -> &mut Vec<Op> {
        if self.pages.is_empty() {
            self.pages.push(Vec::new());
        }
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    /// Starts a new page; what follows goes at its top.
    pub(super) fn new_page(&mut self) {
        self.pages.push(Vec::new());
        self.y = MARGIN;
    }

    fn ensure(&mut self, height: f32) {
        if self.y + height > BOTTOM && self.y > MARGIN + 1.0 {
            self.new_page();
        }
    }

    fn text_at(&mut self, x: f32, baseline: f32, size: f32, bold: bool, grey: bool, text: String) {
        self.page().push(Op::Text {
            x,
            y: baseline,
            size,
            bold,
            grey,
            text,
        });
    }

    /// A bold heading of `size` points.
    pub(super) fn heading(&mut self, text: &str, size: f32) {
        // Keep a heading with at least a few lines of what follows it.
        self.ensure(size * 3.0 + 50.0);
        self.y += size * 0.6;
        // A long heading (a session's title) wraps rather than runs off the page.
        let lines = self.wrap(text, size, true, BODY);
        let count = lines.len();
        for (i, line) in lines.into_iter().enumerate() {
            let baseline = self.y + size;
            self.text_at(MARGIN, baseline, size, true, false, line);
            self.y = baseline
                + if i + 1 < count {
                    size * 0.25
                } else {
                    size * 0.5
                };
        }
    }

    /// Text wrapped to the text column (`grey` for secondary text).
    pub(super) fn paragraph(&mut self, text: &str, size: f32, grey: bool) {
        for line in self.wrap(text, size, false, BODY) {
            self.ensure(size * 1.4);
            let baseline = self.y + size;
            self.text_at(MARGIN, baseline, size, false, grey, line);
            self.y += size * 1.4;
        }
        self.y += size * 0.4;
    }

    /// A table with wrapped cells; the header row repeats after a page break.
    pub(super) fn table(
        &mut self,
        headers: &[&str],
        widths: &[f32],
        rows: &[Vec<String>],
        size: f32,
    ) {
        let pad = 3.0;
        let line_h = size * 1.3;
        let total: f32 = widths.iter().sum();
        let scale = BODY / total;
        let widths: Vec<f32> = widths.iter().map(|w| w * scale).collect();
        let header_lines: Vec<Vec<String>> = headers
            .iter()
            .zip(&widths)
            .map(|(h, w)| self.wrap(h, size, true, w - 2.0 * pad))
            .collect();
        let header_h =
            header_lines.iter().map(Vec::len).max().unwrap_or(1) as f32 * line_h + 2.0 * pad;
        let draw_header = |l: &mut Layout| {
            let y = l.y;
            l.page().push(Op::Rect {
                x: MARGIN,
                y,
                w: BODY,
                h: header_h,
                shade: 225,
            });
            let mut x = MARGIN;
            for (lines, w) in header_lines.iter().zip(&widths) {
                for (k, line) in lines.iter().enumerate() {
                    l.text_at(
                        x + pad,
                        y + pad + size + k as f32 * line_h,
                        size,
                        true,
                        false,
                        line.clone(),
                    );
                }
                x += w;
            }
            l.y += header_h;
        };
        self.ensure(header_h + line_h * 2.0);
        draw_header(self);
        for (r, row) in rows.iter().enumerate() {
            let cells: Vec<Vec<String>> = row
                .iter()
                .zip(&widths)
                .map(|(c, w)| self.wrap(c, size, false, w - 2.0 * pad))
                .collect();
            let h = cells.iter().map(Vec::len).max().unwrap_or(1) as f32 * line_h + 2.0 * pad;
            if self.y + h > BOTTOM {
                self.new_page();
                draw_header(self);
            }
            let y = self.y;
            if r % 2 == 1 {
                self.page().push(Op::Rect {
                    x: MARGIN,
                    y,
                    w: BODY,
                    h,
                    shade: 245,
                });
            }
            let mut x = MARGIN;
            for (lines, w) in cells.iter().zip(&widths) {
                for (k, line) in lines.iter().enumerate() {
                    self.text_at(
                        x + pad,
                        y + pad + size + k as f32 * line_h,
                        size,
                        false,
                        false,
                        line.clone(),
                    );
                }
                x += w;
            }
            self.y += h;
            let y = self.y;
            self.page().push(Op::Line {
                x1: MARGIN,
                y1: y,
                x2: MARGIN + BODY,
                y2: y,
            });
        }
        self.y += size;
    }

    /// A chart from its SVG, scaled to the text column's width.
    pub(super) fn svg(&mut self, svg: &str) -> Result<(), ReportError> {
        let tree = usvg::Tree::from_str(svg, &fonts::svg_options())
            .map_err(|e| ReportError::Pdf(format!("chart SVG: {e}")))?;
        let (tw, th) = (tree.size().width(), tree.size().height());
        let w = BODY;
        let h = th * w / tw;
        self.ensure(h + 8.0);
        let y = self.y;
        self.page().push(Op::Svg {
            tree: Box::new(tree),
            x: MARGIN,
            y,
            w,
            h,
        });
        self.y += h + 12.0;
        Ok(())
    }

    /// The pages laid out, each as its drawing operations in order.
    pub(super) fn into_pages(self) -> Vec<Vec<Op>> {
        self.pages
    }
}

impl crate::document::Page for Layout {
    fn heading(&mut self, text: &str, size: f32) {
        Layout::heading(self, text, size);
    }

    fn paragraph(&mut self, text: &str, size: f32, grey: bool) {
        Layout::paragraph(self, text, size, grey);
    }

    fn table(&mut self, headers: &[&str], widths: &[f32], rows: &[Vec<String>], size: f32) {
        crate::document::check_table(headers, widths, rows);
        Layout::table(self, headers, widths, rows, size);
    }

    fn chart(
        &mut self,
        data: &crate::charts::ChartData<'_>,
        kind: trainbench_core::session::ChartKind,
    ) -> Result<(), ReportError> {
        // Drawn narrower than on screen, so its text reads at the page's size.
        self.svg(&crate::charts::svg_sized(data, kind, 720)?)
    }

    fn break_page(&mut self) {
        self.new_page();
    }
}
