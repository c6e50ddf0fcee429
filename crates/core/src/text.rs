//! Text from elsewhere (workers, hosts, imported files) made safe to keep and
//! to show: cut to a size with a marker, and control characters escaped
//! before they reach a terminal (where they could move the cursor, change
//! colours or rewrite what was printed before).

use std::borrow::Cow;

/// `text` cut to at most `max` bytes (at a character boundary), with a marker
/// saying how much was cut.
/// `s` with its first letter upper-case ("a tie: …" → "A tie: …").
pub fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

pub fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let skipped = text.len() - end;
    text.truncate(end);
    text.push_str(&format!(" [… {skipped} more bytes cut]"));
    text
}

/// `text` with every control character but the newline and tab written as
/// an escape (`\u{1b}` for ESC), so it prints as what it is.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let keep = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(keep) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if keep(c) {
                    c.to_string()
                } else {
                    c.escape_unicode().to_string()
                }
            })
            .collect(),
    )
}

/// The message a panic carried (`panic!("…")` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_whole_characters_and_says_how_much_went() {
        assert_eq!(cut("short".into(), 10), "short");
        let c = cut("éééé".into(), 3);
        assert_eq!(c, "é [… 6 more bytes cut]");
    }

    #[test]
    fn a_panic_message_is_read_whether_it_was_a_str_or_a_string() {
        let caught = std::panic::catch_unwind(|| panic!("plain")).unwrap_err();
        assert_eq!(panic_message(caught.as_ref()), Some("plain"));
        let n = 3;
        let caught = std::panic::catch_unwind(|| panic!("formatted {n}")).unwrap_err();
        assert_eq!(panic_message(caught.as_ref()), Some("formatted 3"));
        let caught = std::panic::catch_unwind(|| std::panic::panic_any(7_u8)).unwrap_err();
        assert_eq!(panic_message(caught.as_ref()), None);
    }

    #[test]
    fn control_characters_are_escaped_for_the_terminal() {
        assert_eq!(escape_controls("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            escape_controls("red \u{1b}[31m\r!\u{7}"),
            "red \\u{1b}[31m\\u{d}!\\u{7}"
        );
        assert!(matches!(escape_controls("x"), Cow::Borrowed(_)));
    }
}
