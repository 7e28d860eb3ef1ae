//! App layers: what wraps every response of an app (or of the paths a layer names)
//! after its handler: compression, CORS; what refuses a request before it:
//! rate limits. Each is an [`App`](crate::App) setting applied in one place,
//! [`Layers`], with nothing on the request path when unset; and the app's own
//! observability: `/metrics` and request spans.

mod compression;
mod cors;
mod headers;
mod metrics;
mod rate_limit;

use kiln_http::{Request, Response};

use crate::rejection::TooManyRequests;

pub use compression::{Compression, DEFAULT_COMPRESSION_MIN_SIZE, Encoding, Levels};
pub use cors::Cors;
pub use metrics::Metrics;
pub(crate) use metrics::{Counting, WorkerCounters};
pub(crate) use rate_limit::Keying;
pub use rate_limit::RateLimit;

/// The app's layers, in the order they apply.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layers {
    pub(crate) compression: Option<Compression>,
    /// CORS policies, the first whose prefix matches the path applying.
    pub(crate) cors: Vec<Cors>,
    /// Whether each request runs in a `tracing` span (`request`, with its method and
    /// path).
    pub(crate) request_spans: bool,
    /// The `/metrics` endpoint and the counters behind it.
    pub(crate) metrics: Option<Metrics>,
    /// Rate limits, every one that covers a request applying.
    pub(crate) rate_limits: Vec<RateLimit>,
}

impl Layers {
    /// Before routing: a CORS preflight is answered here. `true` when the response
    /// is complete.
    pub(crate) fn before(&self, req: Request<'_>, path: &str, res: &mut Response) -> bool {
        if let Some(metrics) = &self.metrics {
            if metrics.is_scrape(req, path) {
                metrics.render(res);
                return true;
            }
        }
        match self.cors_for(path) {
            Some(cors) => cors.preflight(req, path, res),
            None => false,
        }
    }

    /// After routing, before the handler: the first rate limit that covers the
    /// request and finds its client's budget spent. `route` is the pattern matched.
    /// Every rate limit that covers the request, `path` being its path as dispatch read it.
    pub(crate) fn rate_limit(
        &self,
        req: &Request<'_>,
        path: &str,
        route: Option<&str>,
        keying: &Keying<'_>,
    ) -> Result<(), TooManyRequests> {
        self.rate_limits.iter().try_for_each(|limit| limit.limit(req, path, route, keying))
    }

    /// Whether some rate limit may cover a request routed to `pattern`'s `method`
    /// handler (see [`RateLimit::may_cover`]); decided at build time.
    pub(crate) fn rate_limit_may_cover(&self, pattern: &str, method: &kiln_http::Method) -> bool {
        self.rate_limits.iter().any(|limit| limit.may_cover(pattern, method))
    }

    /// Whether some rate limit may cover a request that no route matched.
    pub(crate) fn rate_limit_may_cover_unrouted(&self) -> bool {
        self.rate_limits.iter().any(RateLimit::may_cover_unrouted)
    }

    fn cors_for(&self, path: &str) -> Option<&Cors> {
        self.cors.iter().find(|c| c.covers(path))
    }

    /// After the handler (and `SecureHeaders`): CORS, then compression, over the
    /// final headers.
    pub(crate) fn after(&self, req: Request<'_>, path: &str, res: &mut Response) {
        if let Some(cors) = self.cors_for(path) {
            cors.apply(req, path, res);
        }
        if let Some(compression) = &self.compression {
            compression.apply(req, path, res);
        }
    }
}
