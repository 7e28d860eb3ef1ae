//! What an app decides once and every request reads: the body limit, how rejections
//! are rendered, the public URL, and the secret key and policy of signed cookies.

use std::sync::Arc;
use std::time::Duration;

use kiln_http::{Response, TrustedProxies};

use crate::key::Key;
use crate::rejection::Rejection;

/// Largest body [`Json`](crate::Json) and [`Form`](crate::Form) accept by default.
pub const DEFAULT_BODY_LIMIT: usize = 256 * 1024;
/// How long a [`Session`](crate::Session) lasts by default.
pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

pub(crate) type RenderRejection = dyn Fn(&Rejection, &mut Response) + Send + Sync;

/// The app's settings, shared read-only by every worker.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) body_limit: usize,
    pub(crate) render: Option<Arc<RenderRejection>>,
    /// The checked public URL, without a trailing slash.
    pub(crate) public_url: Option<Arc<str>>,
    pub(crate) key: Option<Key>,
    pub(crate) session_ttl: Duration,
    /// Whether session and CSRF cookies carry `Secure`.
    pub(crate) secure_cookies: bool,
    /// Whose `Forwarded` / `X-Forwarded-For` name the client ([`ClientAddr`](crate::ClientAddr)).
    pub(crate) trusted_proxies: TrustedProxies,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            body_limit: DEFAULT_BODY_LIMIT,
            render: None,
            public_url: None,
            key: None,
            session_ttl: DEFAULT_SESSION_TTL,
            secure_cookies: false,
            trusted_proxies: TrustedProxies::none(),
        }
    }
}

impl Config {
    /// Renders a rejection the app's way. The response is still untouched: rejections
    /// happen before a handler runs.
    pub(crate) fn reject(&self, rejection: &Rejection, res: &mut Response) {
        match &self.render {
            Some(render) => render(rejection, res),
            None => rejection.render_plain(res),
        }
        if let Rejection::MethodNotAllowed(r) = rejection {
            // RFC 9110 §15.5.6: a 405 must list the allowed methods.
            if !res.has_header("allow") {
                res.append_header_unchecked(b"Allow", r.allow().as_bytes());
            }
        }
    }
}
