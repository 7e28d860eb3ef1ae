//! [`RateLimit`]: how often each client is answered, counted once for the whole
//! process, as an `App` layer or asked by a handler.
//!
//! `gcra` is the arithmetic of one budget, `table` the fixed, lock-free table of
//! budgets every worker thread shares, `key` whose budget a request spends and
//! `settings` the builder. The user's explanation, with an example, is
//! [`RateLimit`]'s.

mod gcra;
mod key;
mod settings;
mod table;

use std::hash::Hash;
use std::time::Duration;

use kiln_http::Request;

use crate::client_addr::ClientAddr;
use crate::rejection::TooManyRequests;
pub(crate) use key::Keying;
pub use settings::RateLimit;

impl RateLimit {
    /// Spends one request of `key`'s budget: `Err` (a `429` with `Retry-After` when
    /// returned as a rejection) when it is spent. For a handler that counts only some
    /// requests (a comment that would be stored, not one sent back to be fixed).
    ///
    /// ```
    /// let limit = kiln::RateLimit::per_hour(2);
    /// assert!(limit.check("ada").is_ok() && limit.check("ada").is_ok());
    /// let refused = limit.check("ada").unwrap_err();
    /// assert_eq!(refused.retry_after_secs(), 1800);
    /// assert!(limit.check("grace").is_ok(), "a budget of her own");
    /// ```
    pub fn check<K: Hash + ?Sized>(&self, key: &K) -> Result<(), TooManyRequests> {
        self.spend(self.table.hash(key))
    }

    /// [`check`](Self::check) keyed by a client address as the layer keys it (an IPv6
    /// client by its `/64`).
    pub fn check_client(&self, ClientAddr(ip): ClientAddr) -> Result<(), TooManyRequests> {
        self.check(&key::client_prefix(ip))
    }

    /// As a layer, between routing and the handler: `Err` when the request is covered
    /// and its client's budget is spent. `route` is the pattern the router matched.
    pub(crate) fn limit(
        &self,
        req: &Request<'_>,
        path: &str,
        route: Option<&str>,
        keying: &Keying<'_>,
    ) -> Result<(), TooManyRequests> {
        if !self.covers(req, path, route) {
            return Ok(());
        }
        match self.key.hash(req, &self.table, keying) {
            Some(hash) => self.spend(hash),
            None => Ok(()),
        }
    }

    /// Whether the limit may cover a request routed to `pattern`'s `method` handler,
    /// decided once at build time: its routes name it, or else its methods take
    /// `method` and its prefix can begin a path the pattern matches. `false` only when
    /// [`covers`](Self::covers) is `false` for every such request (a `HEAD` routed
    /// to a `GET` counts as the `GET`).
    pub(crate) fn may_cover(&self, pattern: &str, method: &kiln_http::Method) -> bool {
        use kiln_http::Method;
        let takes = |m: &Method| m == method || (*method == Method::GET && *m == Method::HEAD);
        if !self.routes.is_empty() {
            return self.routes.iter().any(|(p, m)| *p == pattern && takes(m));
        }
        let literal = pattern.split(['{', '*']).next().unwrap_or("");
        let methods = self.methods.is_empty() || self.methods.iter().any(takes);
        methods && (literal.starts_with(&*self.prefix) || self.prefix.starts_with(literal))
    }

    /// Whether the limit may cover a request no route matched (a `404`, or the
    /// fallback's): only one not scoped to routes.
    pub(crate) fn may_cover_unrouted(&self) -> bool {
        self.routes.is_empty()
    }

    /// Whether keying needs the app's secret key.
    pub(crate) fn needs_secret(&self) -> bool {
        self.key.needs_secret()
    }

    /// Whether the limit applies. `path` is the one dispatch already read: reading it
    /// again from the request is a UTF-8 check of the target per request.
    fn covers(&self, req: &Request<'_>, path: &str, route: Option<&str>) -> bool {
        let method = req.method();
        let method_is = |m: &kiln_http::Method| m == method || (m == "GET" && method == "HEAD");
        path.starts_with(&*self.prefix)
            && (self.methods.is_empty() || self.methods.iter().any(|m| m == method))
            && (self.routes.is_empty() || self.routes.iter().any(|(p, m)| route == Some(*p) && method_is(m)))
    }

    fn spend(&self, hash: u64) -> Result<(), TooManyRequests> {
        let result = match &self.clock {
            Some(clock) => self.table.admit(hash, self.quota, || nanos(clock())),
            None => self.table.admit(hash, self.quota, || self.table.elapsed()),
        };
        result.map_err(|wait| {
            let wait = Duration::from_nanos(wait);
            match &self.message {
                Some(message) => TooManyRequests::new(message.clone(), wait),
                None => TooManyRequests::after(wait),
            }
        })
    }
}

fn nanos(time: Duration) -> u64 {
    u64::try_from(time.as_nanos()).unwrap_or(u64::MAX)
}
