//! [`Cors`]: cross-origin requests (the Fetch standard's CORS protocol) allowed for the
//! origins, methods and headers an app names, as an `App` layer.

mod settings;

use kiln_http::{Request, Response, StatusCode};

use super::headers::has_token;
pub use settings::Cors;
use settings::Origins;

/// What the layer decided about a request's `Origin`.
enum Verdict {
    /// Not a cross-origin request the layer handles.
    Pass,
    /// Allowed.
    Allow,
    /// Refused, and why (logged, and the body of a refused preflight).
    Refuse(String),
}

impl Cors {
    /// Whether `path` is this policy's.
    pub(crate) fn covers(&self, path: &str) -> bool {
        path.starts_with(&*self.prefix)
    }

    /// A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is
    /// answered here, before routing, whose `405` would fail it: `true` when it was.
    pub(crate) fn preflight(&self, req: Request<'_>, path: &str, res: &mut Response) -> bool {
        if req.method() != "OPTIONS" {
            return false;
        }
        let (Some(origin), Some(method)) = (req.header_str("origin"), req.header_str("access-control-request-method"))
        else {
            return false;
        };
        let requested = req.header_str("access-control-request-headers").unwrap_or("");
        let refusal = match self.origin_verdict(origin, req) {
            Verdict::Refuse(why) => Some(why),
            _ if !self.allows_method(method) => Some(format!("method {method} is not among the allowed methods")),
            _ => {
                self.refused_header(requested).map(|h| format!("request header `{h}` is not among the allowed headers"))
            }
        };
        if let Some(why) = refusal {
            tracing::warn!(target: "kiln::cors", origin, path, method, "CORS preflight refused: {why}");
            res.set_status(StatusCode::FORBIDDEN);
            res.set_content_type("text/plain; charset=utf-8");
            let body = res.body_mut();
            body.extend_from_slice(b"CORS preflight refused: ");
            body.extend_from_slice(why.as_bytes());
            body.push(b'\n');
            res.append_header_unchecked(
                b"Vary",
                b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
            );
            return true;
        }
        res.set_status(StatusCode::NO_CONTENT);
        self.allow_origin(res, origin);
        res.append_header_unchecked(b"Access-Control-Allow-Methods", self.methods.as_bytes());
        if !requested.trim().is_empty() {
            let headers = if self.any_header { requested.as_bytes() } else { self.headers.as_bytes() };
            res.append_header_unchecked(b"Access-Control-Allow-Headers", headers);
        }
        if let Some(max_age) = self.max_age {
            res.append_header_unchecked(
                b"Access-Control-Max-Age",
                itoa::Buffer::new().format(max_age.as_secs()).as_bytes(),
            );
        }
        res.append_header_unchecked(b"Vary", b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
        true
    }

    /// After the handler: an allowed origin is told so; any response in scope varies by
    /// `Origin`, since another origin would get other headers.
    pub(crate) fn apply(&self, req: Request<'_>, path: &str, res: &mut Response) {
        let vary = !matches!(self.origins, Origins::Any) || self.credentials;
        if let Some(origin) = req.header_str("origin") {
            match self.origin_verdict(origin, req) {
                Verdict::Allow => {
                    self.allow_origin(res, origin);
                    if !self.expose.is_empty() {
                        res.append_header_unchecked(b"Access-Control-Expose-Headers", self.expose.as_bytes());
                    }
                }
                Verdict::Refuse(why) => {
                    tracing::info!(target: "kiln::cors", origin, path, "cross-origin response not shared: {why}");
                }
                Verdict::Pass => {}
            }
        }
        if vary {
            res.append_header_unchecked(b"Vary", b"Origin");
        }
    }

    fn allow_origin(&self, res: &mut Response, origin: &str) {
        // `*` cannot carry credentials (Fetch §3.2.5), so with them the origin is named.
        let value = if matches!(self.origins, Origins::Any) && !self.credentials { "*" } else { origin };
        res.append_header_unchecked(b"Access-Control-Allow-Origin", value.as_bytes());
        if self.credentials {
            res.append_header_unchecked(b"Access-Control-Allow-Credentials", b"true");
        }
    }

    fn origin_verdict(&self, origin: &str, req: Request<'_>) -> Verdict {
        let allowed = match &self.origins {
            Origins::Any => true,
            Origins::List(list) => list.iter().any(|o| o.eq_ignore_ascii_case(origin)),
            Origins::Predicate(f) => f(origin),
        };
        if allowed {
            Verdict::Allow
        } else if same_origin(origin, req) {
            // A browser sends `Origin` on its own site's POSTs too: not cross-origin.
            Verdict::Pass
        } else {
            Verdict::Refuse(format!("origin {origin} is not allowed"))
        }
    }

    fn allows_method(&self, method: &str) -> bool {
        // GET, HEAD and POST are CORS-safelisted (Fetch §2.2.1): always allowed.
        matches!(method, "GET" | "HEAD" | "POST") || has_token(self.methods.as_bytes(), method.as_bytes())
    }

    /// The first requested header the policy does not allow.
    fn refused_header<'h>(&self, requested: &'h str) -> Option<&'h str> {
        if self.any_header {
            return None;
        }
        requested
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .find(|h| !has_token(self.headers.as_bytes(), h.as_bytes()))
    }
}

/// Whether `origin` names the host the request was sent to.
fn same_origin(origin: &str, req: Request<'_>) -> bool {
    let host = origin.split_once("://").map_or(origin, |(_, host)| host);
    req.header_str("host").is_some_and(|h| h.eq_ignore_ascii_case(host))
}
