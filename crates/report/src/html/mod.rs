//! The HTML report: the PDF's sections ([`crate::document`]) as one
//! self-contained web page that opens in any browser and fetches nothing.
//!
//! - Every text of the runs (labels, notes, a model file's name, an error's
//!   last lines) is escaped ([`esc`]) before it reaches the page.
//! - The page's Content-Security-Policy allows no network access at all
//!   (`default-src 'none'`) and only the one inline script the studio wrote,
//!   by its SHA-256; styles are inline; there is no image, font or frame.
//! - The charts (`charts`) are drawn as inline SVG from the same data as the
//!   PDF's: hovering a bar, a point or a segment shows its figures (a tooltip
//!   the script fills with text, never markup), and each chart's legend
//!   hides and shows its series.

mod charts;

use std::fmt::Write as _;

use sha2::{Digest, Sha256};
use trainbench_core::session::ChartKind;

use crate::charts::ChartData;
use crate::document::{self, Page, Provenance, ReportInput};
use crate::ReportError;

/// The page's only script: tooltips and the legends' toggles.
const SCRIPT: &str = include_str!("report.js");
const STYLE: &str = include_str!("report.css");

/// Text made safe for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The report as one HTML document.
pub fn report(input: &ReportInput<'_>) -> Result<String, ReportError> {
    let provenance = Provenance::of(input);
    let mut page = HtmlPage::default();
    document::write(&mut page, input, &provenance)?;
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"TrainBench Studio {version}\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n\
         <div id=\"tip\" role=\"tooltip\" hidden></div>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        csp = csp(),
        version = esc(input.studio_version),
        title = esc(&input.title),
        body = page.body,
    ))
}

/// No network, no plugin, no frame; only the studio's own script.
fn csp() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{}'; \
         base-uri 'none'; form-action 'none'",
        base64(&Sha256::digest(SCRIPT.as_bytes()))
    )
}

/// Standard base64 with padding (RFC 4648), for the script's hash.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The sections written as HTML.
#[derive(Default)]
struct HtmlPage {
    body: String,
    charts: usize,
}

impl Page for HtmlPage {
    fn heading(&mut self, text: &str, size: f32) {
        let h = if size >= 14.0 {
            "h1"
        } else if size >= 12.0 {
            "h2"
        } else {
            "h3"
        };
        let _ = writeln!(self.body, "<{h}>{}</{h}>", esc(text));
    }

    fn paragraph(&mut self, text: &str, _size: f32, grey: bool) {
        let class = if grey { " class=\"note\"" } else { "" };
        let _ = writeln!(self.body, "<p{class}>{}</p>", esc(text));
    }

    fn table(&mut self, headers: &[&str], widths: &[f32], rows: &[Vec<String>], _size: f32) {
        document::check_table(headers, widths, rows);
        let total: f32 = widths.iter().sum::<f32>().max(1.0);
        let b = &mut self.body;
        b.push_str("<div class=\"table\"><table>\n<colgroup>");
        for w in widths {
            let _ = write!(b, "<col style=\"width:{:.1}%\">", w / total * 100.0);
        }
        b.push_str("</colgroup>\n<thead><tr>");
        for h in headers {
            let _ = write!(b, "<th>{}</th>", esc(h));
        }
        b.push_str("</tr></thead>\n<tbody>\n");
        for row in rows {
            b.push_str("<tr>");
            for cell in row {
                let _ = write!(b, "<td>{}</td>", esc(cell));
            }
            b.push_str("</tr>\n");
        }
        b.push_str("</tbody></table></div>\n");
    }

    fn chart(&mut self, data: &ChartData<'_>, kind: ChartKind) -> Result<(), ReportError> {
        self.charts += 1;
        self.body.push_str(&charts::figure(data, kind, self.charts));
        Ok(())
    }

    fn break_page(&mut self) {
        self.body.push_str("<hr>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_the_hash_encoding() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert!(csp().starts_with("default-src 'none';"));
    }
}
