//! Reading a response's header lines (`Name: value\r\n`, as `kiln_http::Response`
//! keeps them) and comma-separated header values, for the layers.

/// The value of the first header `name` (ASCII case-insensitive) in `lines`.
pub(crate) fn response_header<'h>(lines: &'h [u8], name: &str) -> Option<&'h [u8]> {
    lines.split(|&b| b == b'\n').find_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let (n, v) = line.split_at_checked(name.len())?;
        (n.eq_ignore_ascii_case(name.as_bytes()) && v.first() == Some(&b':')).then(|| v[1..].trim_ascii())
    })
}

/// Whether the comma-separated `value` lists `token` (ASCII case-insensitive),
/// ignoring parameters after `;` or `=`.
pub(crate) fn has_token(value: &[u8], token: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|item| {
        let item = item.split(|&b| b == b';' || b == b'=').next().unwrap_or_default().trim_ascii();
        item.eq_ignore_ascii_case(token)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_found_by_name_and_lists_by_token() {
        let lines = b"Content-Type: text/html\r\nVary: Origin, Accept-Encoding\r\nX-Content-Type-Options: nosniff\r\n";
        assert_eq!(response_header(lines, "content-type"), Some(&b"text/html"[..]));
        assert_eq!(response_header(lines, "content"), None);
        assert!(has_token(response_header(lines, "vary").unwrap(), b"accept-encoding"));
        assert!(!has_token(b"no-cache", b"no-transform"));
        assert!(has_token(b"max-age=3, no-transform", b"no-transform"));
    }
}
