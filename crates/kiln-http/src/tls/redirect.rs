//! The plain-HTTP listener's whole job once a site serves HTTPS: send each request to
//! the same host and target over HTTPS.

use std::fmt::Write;
use std::future::Future;

use http::StatusCode;

use crate::request::Request;
use crate::response::Response;
use crate::service::Service;

/// A [`Service`] that answers every request with `308 Permanent Redirect` to
/// `https://<host><target>`, for a plain-HTTP listener beside an HTTPS one.
///
/// The host is the request's own `Host` (its port replaced by the HTTPS port), so the
/// redirect never leads to another host; a request without a valid `Host` gets `400`.
/// `308`, not `301`: the method and body are kept (RFC 9110 §15.4.9).
///
/// ```no_run
/// use kiln_http::{HttpsRedirect, Server};
/// let redirect = Server::new()
///     .listen("0.0.0.0:80")
///     .workers(1)
///     .serve(|_| HttpsRedirect::new(443))
///     .expect("listen");
/// # drop(redirect);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HttpsRedirect {
    https_port: u16,
}

impl HttpsRedirect {
    /// Redirects to HTTPS on `https_port` (left out of the URL when it is 443).
    pub fn new(https_port: u16) -> Self {
        HttpsRedirect { https_port }
    }

    fn location(&self, req: &Request<'_>) -> Option<String> {
        let host = host_name(req.header_str("host")?)?;
        let mut url = format!("https://{host}");
        if self.https_port != 443 {
            let _ = write!(url, ":{}", self.https_port);
        }
        // Rebuilt from the path, so an absolute-form target (`GET http://a/b`) or
        // `OPTIONS *` cannot put anything but a path after the host.
        let path = req.path();
        url.push_str(if path.starts_with('/') { path } else { "/" });
        if let Some(query) = req.query() {
            url.push('?');
            url.push_str(query);
        }
        Some(url)
    }
}

impl Service for HttpsRedirect {
    fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> impl Future<Output = ()> + 'a {
        res.set_content_type("text/plain; charset=utf-8");
        match self.location(&req) {
            Some(url) if res.insert_header("location", url.as_bytes()).is_ok() => {
                res.set_status(StatusCode::PERMANENT_REDIRECT);
                res.body_mut().extend_from_slice(b"this site is served over HTTPS\n");
            }
            _ => {
                res.set_status(StatusCode::BAD_REQUEST);
                res.body_mut().extend_from_slice(b"a valid Host header is required\n");
            }
        }
        std::future::ready(())
    }
}

/// The host of a `Host` value without its port: a DNS name or IPv4 address made of
/// letters, digits, `-` and `.`, or a bracketed IPv6 literal; `None` for anything else
/// (userinfo, a path, spaces), which could make the URL point elsewhere.
fn host_name(value: &str) -> Option<&str> {
    let host = if value.starts_with('[') {
        let end = value.find(']')? + 1;
        let inner = &value[1..end - 1];
        let ok = !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
        let rest = &value[end..];
        (ok && (rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port))).then_some(&value[..end])?
    } else {
        let host = match value.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return None,
            None => value,
        };
        let ok = !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
        ok.then_some(host)?
    };
    Some(host)
}

/// One to five digits.
fn is_port(digits: &str) -> bool {
    (1..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_kept_without_their_port_and_anything_else_is_refused() {
        let cases = [
            ("example.com", Some("example.com")),
            ("example.com:8080", Some("example.com")),
            ("127.0.0.1:80", Some("127.0.0.1")),
            ("[::1]:8080", Some("[::1]")),
            ("[::1]", Some("[::1]")),
            ("", None),
            ("evil.com/x", None),
            ("user@evil.com", None),
            ("a.com:80:80", None),
            ("a.com:", None),
            ("a.com:http", None),
            ("[::1]x", None),
            ("[]", None),
            ("a b", None),
        ];
        for (value, want) in cases {
            assert_eq!(host_name(value), want, "{value:?}");
        }
    }

    #[test]
    fn redirect_keeps_host_path_and_query_and_names_a_non_default_port() {
        let req = crate::RequestBytes::parse(
            b"GET /a/b?x=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n".to_vec(),
            "127.0.0.1:1".parse().unwrap(),
        )
        .unwrap();
        assert_eq!(HttpsRedirect::new(443).location(&req.request()).unwrap(), "https://example.com/a/b?x=1");
        assert_eq!(HttpsRedirect::new(8443).location(&req.request()).unwrap(), "https://example.com:8443/a/b?x=1");
    }
}
