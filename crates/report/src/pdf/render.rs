//! Draws laid-out pages into a PDF with krilla: text in the shipped DejaVu
//! fonts (selectable and extractable), shaded bands, rules, and charts as
//! vectors from their SVG.

use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Rect, Size, Transform};
use krilla::metadata::Metadata;
use krilla::page::PageSettings;
use krilla::paint::{Fill, Stroke};
use krilla::text::{Font, TextDirection};
use krilla::Document;
use krilla_svg::{SurfaceExt, SvgSettings};

use super::layout::{Layout, Op, MARGIN, PAGE_H, PAGE_W};
use crate::document::Provenance;
use crate::{fonts, ReportError};

fn colour(shade: u8) -> rgb::Color {
    rgb::Color::new(shade, shade, shade)
}

fn fill(shade: u8) -> Fill {
    Fill {
        paint: colour(shade).into(),
        ..Fill::default()
    }
}

/// Draws the laid-out pages with krilla, a footer on each (the title and the
/// page number), and returns the PDF's bytes.
pub(super) fn render(
    layout: Layout,
    title: &str,
    provenance: &Provenance,
) -> Result<Vec<u8>, ReportError> {
    let regular = Font::new(fonts::REGULAR.to_vec().into(), 0)
        .ok_or_else(|| ReportError::Font("DejaVu Sans does not load".into()))?;
    let bold = Font::new(fonts::BOLD.to_vec().into(), 0)
        .ok_or_else(|| ReportError::Font("DejaVu Sans Bold does not load".into()))?;
    let mut doc = Document::new();
    doc.set_metadata(
        Metadata::new()
            .title(format!("TrainBench report: {title}"))
            .creator(format!("TrainBench Studio {}", provenance.studio_version)),
    );
    let laid_out = layout.into_pages();
    let pages = laid_out.len();
    let settings = PageSettings::from_wh(PAGE_W, PAGE_H)
        .ok_or_else(|| ReportError::Pdf("page size".into()))?;
    for (n, ops) in laid_out.into_iter().enumerate() {
        let mut page = doc.start_page_with(settings.clone());
        let mut surface = page.surface();
        for op in ops {
            match op {
                Op::Text {
                    x,
                    y,
                    size,
                    bold: is_bold,
                    grey,
                    text,
                } => {
                    surface.set_stroke(None);
                    surface.set_fill(Some(fill(if grey { 90 } else { 0 })));
                    let font = if is_bold {
                        bold.clone()
                    } else {
                        regular.clone()
                    };
                    surface.draw_text(
                        Point::from_xy(x, y),
                        font,
                        size,
                        &text,
                        false,
                        TextDirection::Auto,
                    );
                }
                Op::Rect { x, y, w, h, shade } => {
                    let Some(rect) = Rect::from_xywh(x, y, w, h) else {
                        continue;
                    };
                    let mut pb = PathBuilder::new();
                    pb.push_rect(rect);
                    if let Some(path) = pb.finish() {
                        surface.set_stroke(None);
                        surface.set_fill(Some(fill(shade)));
                        surface.draw_path(&path);
                    }
                }
                Op::Line { x1, y1, x2, y2 } => {
                    let mut pb = PathBuilder::new();
                    pb.move_to(x1, y1);
                    pb.line_to(x2, y2);
                    if let Some(path) = pb.finish() {
                        surface.set_fill(None);
                        surface.set_stroke(Some(Stroke {
                            paint: colour(200).into(),
                            width: 0.5,
                            ..Stroke::default()
                        }));
                        surface.draw_path(&path);
                    }
                }
                Op::Svg { tree, x, y, w, h } => {
                    let size =
                        Size::from_wh(w, h).ok_or_else(|| ReportError::Pdf("chart size".into()))?;
                    surface.push_transform(&Transform::from_translate(x, y));
                    surface
                        .draw_svg(&tree, size, SvgSettings::default())
                        .ok_or_else(|| ReportError::Pdf("a chart could not be drawn".into()))?;
                    surface.pop();
                }
            }
        }
        surface.set_stroke(None);
        surface.set_fill(Some(fill(110)));
        surface.draw_text(
            Point::from_xy(MARGIN, PAGE_H - MARGIN + 16.0),
            regular.clone(),
            7.5,
            &format!("TrainBench report: {title} — page {} of {pages}", n + 1),
            false,
            TextDirection::Auto,
        );
        surface.finish();
        page.finish();
    }
    doc.finish().map_err(|e| ReportError::Pdf(format!("{e:?}")))
}
