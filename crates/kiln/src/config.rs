//! What an app decides once and every request reads: the body limit, how rejections
//! are rendered (and where as problem details), the public URL, and the secret key and
//! policy of signed cookies.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use kiln_http::{Response, TrustedProxies};

use crate::key::Key;
use crate::layers::Layers;
use crate::problem::{self, Problems};
use crate::rejection::Rejection;
use crate::secure_headers::SecureHeaders;

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
    /// Added to every response once the app has answered.
    pub(crate) secure_headers: Option<SecureHeaders>,
    /// Compression, CORS: applied around the handler.
    pub(crate) layers: Layers,
    /// `Link` lines of a `103 Early Hints` for page requests ([`App::early_hints`](crate::App::early_hints)).
    pub(crate) early_hints: Option<Arc<[u8]>>,
    /// The path prefixes whose rejections are problem details ([`App::problem_json`](crate::App::problem_json)).
    pub(crate) problems: Option<Arc<Problems>>,
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
            secure_headers: None,
            layers: Layers::default(),
            early_hints: None,
            problems: None,
        }
    }
}

thread_local! {
    /// The renderer of the app whose handler last ran on this thread: a `Rejection` a
    /// handler returns then looks like the ones the app's extractors raise (its
    /// `IntoResponse` has no app to ask). A worker thread serves one app, so this is
    /// set once per worker, not per request: no reference count bounces between cores.
    static RENDERING: RefCell<Option<Arc<RenderRejection>>> = const { RefCell::new(None) };
}

impl Config {
    /// Renders a rejection the app's way. The response is still untouched: rejections
    /// happen before a handler runs.
    pub(crate) fn reject(&self, rejection: &Rejection, res: &mut Response) {
        render_with(self.render.as_deref(), rejection, res);
    }

    /// Renders a rejection of routing itself (no route, a method not allowed, a rate
    /// limit), for a request for `path`: as problem details if the app asked for them
    /// there, else as [`reject`](Self::reject) does.
    pub(crate) fn reject_at(&self, path: &str, rejection: &Rejection, res: &mut Response) {
        match &self.problems {
            Some(problems) if problems.covers(path) => {
                problem::render(rejection, Some(path), res);
                add_headers(rejection, res);
            }
            _ => self.reject(rejection, res),
        }
    }

    /// Runs `fill`, a handler's output filling the response, with this app's renderer
    /// at hand for [`reject_returned`]. It stays the thread's until another app's
    /// handler runs here (tests run several apps on one thread).
    pub(crate) fn rendering<R>(&self, fill: impl FnOnce() -> R) -> R {
        RENDERING.with_borrow_mut(|current| {
            let same = match (&*current, &self.render) {
                (Some(theirs), Some(ours)) => Arc::ptr_eq(theirs, ours),
                (None, None) => true,
                _ => false,
            };
            if !same {
                current.clone_from(&self.render);
            }
        });
        fill()
    }
}

/// Renders a rejection a handler returned, the way its app renders rejections.
pub(crate) fn reject_returned(rejection: &Rejection, res: &mut Response) {
    // Cloned out, so that a renderer that itself returns a rejection finds no borrow.
    let render = RENDERING.with_borrow(Clone::clone);
    render_with(render.as_deref(), rejection, res);
}

fn render_with(render: Option<&RenderRejection>, rejection: &Rejection, res: &mut Response) {
    if !problem::render_in_scope(rejection, res) {
        match render {
            Some(render) => render(rejection, res),
            None => rejection.render_plain(res),
        }
    }
    add_headers(rejection, res);
}

/// The headers a rejection's status requires, unless the renderer set them.
fn add_headers(rejection: &Rejection, res: &mut Response) {
    if let Rejection::MethodNotAllowed(r) = rejection {
        // RFC 9110 §15.5.6: a 405 must list the allowed methods.
        if !res.has_header("allow") {
            res.append_header_unchecked(b"Allow", r.allow().as_bytes());
        }
    }
    // RFC 9110 §15.5.2: a 401 must carry a challenge.
    if let Rejection::Unauthorized(r) = rejection {
        if !res.has_header("www-authenticate") {
            res.append_header_unchecked(b"WWW-Authenticate", r.challenge().as_bytes());
        }
    }
    // RFC 9110 §10.2.3: tells the client when to try again.
    if !res.has_header("retry-after") {
        match rejection {
            Rejection::Unavailable(_) => res.append_header_unchecked(b"Retry-After", b"1"),
            Rejection::TooManyRequests(r) => {
                res.append_header_unchecked(
                    b"Retry-After",
                    itoa::Buffer::new().format(r.retry_after_secs()).as_bytes(),
                );
            }
            _ => {}
        }
    }
    if let Rejection::UnsupportedWebSocketVersion(_) = rejection {
        // RFC 6455 §4.4: a 426 names the versions the server speaks.
        if !res.has_header("sec-websocket-version") {
            res.append_header_unchecked(b"Sec-WebSocket-Version", b"13");
        }
    }
}
