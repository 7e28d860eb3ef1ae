//! [`SecureHeaders`]: what a browser is told so that other sites cannot misuse a
//! site's pages (framing them, sniffing their types).

use kiln_http::Response;

/// Headers that keep other sites from misusing a site's pages:
///
/// - every HTML response gets `X-Frame-Options: DENY` and `Content-Security-Policy:
///   frame-ancestors 'none'`: no other site may show the page in a frame, so a form
///   (an editor's Save, a Logout) cannot be clicked through an invisible one; and
///   `Referrer-Policy: strict-origin-when-cross-origin`;
/// - every response gets `X-Content-Type-Options: nosniff`: a browser takes the
///   `Content-Type` as given, and does not run a text file as a script.
///
/// A header the app set itself is left as it is (a page that may be framed says so
/// with its own `Content-Security-Policy`). Paths for which `except` holds are left
/// alone entirely. Given to [`App::secure_headers`](crate::App::secure_headers), they
/// are added once the app has answered, routed or refused: not a middleware around the
/// app, which would cost every request a layer of future.
///
/// ```
/// use kiln::{App, Route, SecureHeaders, html, test::TestClient};
///
/// #[derive(Route)]
/// #[route("/")]
/// struct Home;
///
/// async fn home(_: Home) -> kiln::markup::Fragment<kiln::markup::Flow> {
///     html! { p { "hello" } }
/// }
///
/// let app = App::new(|_| ()).route(home).secure_headers(SecureHeaders::new());
/// let res = TestClient::new(app).get(&Home);
/// assert_eq!(res.header("x-frame-options"), Some("DENY"));
/// assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SecureHeaders {
    except: fn(&str) -> bool,
}

impl SecureHeaders {
    /// The headers on every response.
    pub fn new() -> Self {
        SecureHeaders { except: |_| false }
    }

    /// Leaves the responses to paths for which `except` holds alone.
    pub fn except(mut self, except: fn(&str) -> bool) -> Self {
        self.except = except;
        self
    }
}

impl Default for SecureHeaders {
    fn default() -> Self {
        SecureHeaders::new()
    }
}

/// The headers, in the order they are added: (name, value, whether only HTML gets it).
const HEADERS: [(&str, &str, bool); 4] = [
    ("X-Content-Type-Options", "nosniff", false),
    ("X-Frame-Options", "DENY", true),
    ("Content-Security-Policy", "frame-ancestors 'none'", true),
    ("Referrer-Policy", "strict-origin-when-cross-origin", true),
];

/// All four as header lines, for the common case of an HTML page that set none of them.
const ALL_LINES: &[u8] = b"X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n\
Content-Security-Policy: frame-ancestors 'none'\r\nReferrer-Policy: strict-origin-when-cross-origin\r\n";

impl SecureHeaders {
    /// Adds the headers `res` lacks, unless `path` is excepted. The response's header
    /// lines are read once (asking `has_header` for each name and the type read them
    /// five times: ~9,000 instructions on a wiki page whose `Set-Cookie` is long).
    pub(crate) fn apply(&self, path: &str, res: &mut Response) {
        if (self.except)(path) {
            return;
        }
        let (html, set) = scan(res.raw_headers());
        if html && set == 0 {
            res.append_raw_headers(ALL_LINES);
            return;
        }
        for (i, (name, value, html_only)) in HEADERS.into_iter().enumerate() {
            if set & (1 << i) == 0 && (html || !html_only) {
                res.append_header_unchecked(name.as_bytes(), value.as_bytes());
            }
        }
    }
}

/// Whether the response's `Content-Type` is `text/html`, and which of [`HEADERS`] it
/// has already (bit `i` for `HEADERS[i]`), from its `Name: value\r\n` lines.
fn scan(lines: &[u8]) -> (bool, u8) {
    let (mut html, mut set) = (false, 0u8);
    for line in lines.split(|&b| b == b'\n') {
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-type") {
            let value = value.trim_ascii_start();
            html |= value.len() >= 9 && value[..9].eq_ignore_ascii_case(b"text/html");
        } else if let Some(i) = HEADERS.iter().position(|(known, ..)| name.eq_ignore_ascii_case(known.as_bytes())) {
            set |= 1 << i;
        }
    }
    (html, set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lines_are_the_headers_in_order() {
        let lines: String = HEADERS.iter().map(|(name, value, _)| format!("{name}: {value}\r\n")).collect();
        assert_eq!(lines.as_bytes(), ALL_LINES);
    }

    #[test]
    fn a_scan_finds_the_type_and_the_headers_set_whatever_their_case() {
        let lines = b"content-TYPE:  Text/HTML; charset=utf-8\r\nSet-Cookie: a=b: c\r\nx-frame-options: SAMEORIGIN\r\n";
        assert_eq!(scan(lines), (true, 0b10));
        assert_eq!(scan(b"Content-Type: text/plain\r\nReferrer-Policy: no-referrer\r\n"), (false, 0b1000));
        assert_eq!(scan(b""), (false, 0));
    }
}
