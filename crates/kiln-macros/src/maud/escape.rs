//! Escaping of literal text at compile time; the same as `maud::Escaper` at run time.

/// Appends `input` to `output` with `&`, `<`, `>` and `"` escaped.
pub(crate) fn escape_to_string(input: &str, output: &mut String) {
    for c in input.chars() {
        match c {
            '&' => output.push_str("&amp;"),
            '<' => output.push_str("&lt;"),
            '>' => output.push_str("&gt;"),
            '"' => output.push_str("&quot;"),
            _ => output.push(c),
        }
    }
}

#[cfg(test)]
mod test {
    use super::escape_to_string;

    #[test]
    fn it_works() {
        let mut s = String::new();
        escape_to_string("<script>launchMissiles()</script>", &mut s);
        assert_eq!(s, "&lt;script&gt;launchMissiles()&lt;/script&gt;");
    }
}
