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

impl SecureHeaders {
    /// Adds the headers `res` lacks, unless `path` is excepted.
    pub(crate) fn apply(&self, path: &str, res: &mut Response) {
        if (self.except)(path) {
            return;
        }
        let html = is_html(res);
        let mut add = |name: &str, value: &str| {
            if !res.has_header(name) {
                res.append_header_unchecked(name.as_bytes(), value.as_bytes());
            }
        };
        add("X-Content-Type-Options", "nosniff");
        if html {
            add("X-Frame-Options", "DENY");
            add("Content-Security-Policy", "frame-ancestors 'none'");
            add("Referrer-Policy", "strict-origin-when-cross-origin");
        }
    }
}

/// Whether the response's `Content-Type` is `text/html`.
fn is_html(res: &Response) -> bool {
    const NAME: &[u8] = b"content-type:";
    res.raw_headers().split(|&b| b == b'\n').any(|line| {
        line.len() > NAME.len() && line[..NAME.len()].eq_ignore_ascii_case(NAME) && {
            let value = line[NAME.len()..].trim_ascii_start();
            value.len() >= 9 && value[..9].eq_ignore_ascii_case(b"text/html")
        }
    })
}
