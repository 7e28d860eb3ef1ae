//! `Content-Type` from a file name's extension.

use std::path::Path;

/// The `Content-Type` value for `path`: the type `mime_guess` knows for its extension,
/// with `charset=utf-8` for text (RFC 9110 §8.3.1: text without a charset parameter is
/// left to the client's guess), and `application/octet-stream` when unknown.
pub(crate) fn content_type(path: &Path) -> String {
    let Some(mime) = mime_guess::from_path(path).first_raw() else {
        return "application/octet-stream".to_owned();
    };
    if is_text(mime) { format!("{mime}; charset=utf-8") } else { mime.to_owned() }
}

fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(mime, "application/javascript" | "application/xml" | "image/svg+xml" | "application/xhtml+xml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_gets_a_charset_and_binary_does_not() {
        assert_eq!(content_type(Path::new("a/hello.txt")), "text/plain; charset=utf-8");
        assert_eq!(content_type(Path::new("index.html")), "text/html; charset=utf-8");
        assert_eq!(content_type(Path::new("app.js")), "text/javascript; charset=utf-8");
        assert_eq!(content_type(Path::new("logo.png")), "image/png");
        assert_eq!(content_type(Path::new("data.json")), "application/json");
        assert_eq!(content_type(Path::new("blob")), "application/octet-stream");
        assert_eq!(content_type(Path::new("x.unknownext")), "application/octet-stream");
    }
}
