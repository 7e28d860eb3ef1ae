//! What text typed into the site's forms may hold, beyond each form's own rules.

/// Whether `text` holds a control character other than the tab and line breaks a
/// textarea sends: a NUL or an escape, once stored, would go raw into every page that
/// shows it.
pub(crate) fn has_control_chars(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
}

#[cfg(test)]
mod tests {
    use super::has_control_chars;

    #[test]
    fn control_characters_are_found_but_tabs_and_line_breaks_are_text() {
        for text in ["a\0b", "\u{1b}[31m", "bell\u{7}", "del\u{7f}", "c1\u{85}", "\u{0}"] {
            assert!(has_control_chars(text), "{text:?}");
        }
        for text in ["", "plain", "two\nlines\r\n", "a\tb", "é ü 日本"] {
            assert!(!has_control_chars(text), "{text:?}");
        }
    }
}
