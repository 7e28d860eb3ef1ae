//! The typed settings of a rate limit: its quota, whose budget a request spends,
//! which requests it covers, its table and its clock.

use std::borrow::Cow;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use kiln_http::{Method, Request};

use super::gcra::Quota;
use super::key::KeyBy;
use super::table::{DEFAULT_CELLS, Table};
use crate::route::Route;

/// A time source: the time since some fixed moment of its own.
pub(super) type Clock = dyn Fn() -> Duration + Send + Sync;

/// A limit on how often each client is answered: `count` requests each period, up to a
/// burst at once; past it, `429 Too Many Requests` with `Retry-After`. Give it to an
/// app with [`App::rate_limit`](crate::App::rate_limit), for all of the app or the
/// requests it names, or ask it from a handler with [`check`](Self::check).
///
/// ```
/// use kiln::{App, RateLimit, Route, test::TestClient};
///
/// #[derive(Route)]
/// #[route(POST, "/login")]
/// struct Login;
///
/// #[derive(Route)]
/// #[route("/")]
/// struct Home;
///
/// async fn login(_: Login) -> &'static str { "welcome" }
/// async fn home(_: Home) -> &'static str { "home" }
///
/// // Two attempts a minute for each client address, on the login route only.
/// let logins = RateLimit::per_minute(2).route::<Login>();
/// let app = App::new(|_| ()).route(login).route(home).rate_limit(logins);
/// let mut client = TestClient::new(app);
/// assert_eq!(client.request("POST", &Login).send().status(), 200);
/// assert_eq!(client.request("POST", &Login).send().status(), 200);
/// let refused = client.request("POST", &Login).send();
/// assert_eq!(refused.status(), 429);
/// assert_eq!(refused.header("retry-after"), Some("30"));
/// assert_eq!(refused.text(), "too many requests: try again in 30 seconds\n");
/// assert_eq!(client.get(&Home).status(), 200, "pages are not limited");
/// ```
///
/// **How it counts.** Each client's budget is one number, the generic cell rate
/// algorithm's *theoretical arrival time*: `per_minute(10)` admits a request every
/// 6 s, and a client that was quiet may send up to its [`burst`](Self::burst) at once
/// (default: the count). A refusal costs nothing: a client that keeps knocking is
/// welcome again as soon as its budget comes back. The refusal is a
/// [`TooManyRequests`](crate::rejection::TooManyRequests) rejection, rendered as the
/// app renders the others ([`App::on_rejection`](crate::App::on_rejection)): its
/// `Retry-After` is the wait in whole seconds, rounded up (RFC 6585 §4, RFC 9110
/// §10.2.3).
///
/// **Whose budget.** By [client address](Self::key_by_client_addr), through the app's
/// [trusted proxies](crate::App::trusted_proxies), an IPv6 client by its `/64`; by
/// [bearer token subject](Self::key_by_bearer_subject); or by a key the app
/// [computes](Self::key_by).
///
/// **Which requests.** All by default; a [path prefix](Self::path_prefix),
/// [methods](Self::methods), typed [routes](Self::route), or any of them together.
/// The check runs after routing (a CORS preflight and a `/metrics` scrape are not
/// counted) and before the handler and its extractors; each limit that covers a
/// request spends from its own budget.
///
/// **One count for the process.** kiln runs a worker per core, each with its own
/// state; a limit kept in that state would give a client a budget on each worker. A
/// `RateLimit`'s budgets live in one table that every worker shares, each budget an
/// `AtomicU64` moved with compare-and-swap: no lock, and no more admissions than the
/// quota, however the requests spread over the workers. A covered request costs a
/// SipHash of its key, two atomic updates and two reads of the clock; an uncovered
/// one on a route that some limit may cover, a prefix, method and route compare per
/// limit; a request to a route that no limit can cover (decided once per route when
/// the app is built), nothing. So a limit on the login route costs the other routes
/// nothing. A request whose method its route does not take (a `405`) counts only
/// where some limit covers one of the route's methods.
///
/// **Bounded memory.** The table is fixed when the limit is made
/// ([`capacity`](Self::capacity), default 32,768 cells of 8 bytes: 256 KiB), however
/// many clients it sees; nothing is stored per client. A key's hash (SipHash, keyed
/// from the OS's random source when the table is made, so a client cannot aim at
/// another's cells) picks one cell in each half of the table; a request is admitted
/// only when both cells admit it, and charged to both. Cells are never evicted or
/// reset: clients that share a cell share its charges, which only ever makes their
/// limit stricter. So a flood of new keys cannot give an active key any budget back:
/// no key is ever admitted more than its quota. What a flood can do is spend shared
/// cells, so that a client whose cells *both* hold others' charges may be refused
/// before its own quota is spent. With `k` clients active in one burst's time and `n`
/// cells, both of a client's cells are shared with a chance of about
/// `(1 − e^(−2k/n))²`: 0.35% for 1,000 active clients in the default table; more
/// cells make it rarer. Under a flood of more keys than cells the limit errs towards
/// refusing, and no longer than the flood: a cell holds at most a burst of charges
/// (refusals charge nothing), so one burst's time after the flood stops every
/// budget is whole again.
///
/// A clone shares the original's table: a clone given to the app and one kept in the
/// state count together. Settings given to a clone afterwards apply to that clone,
/// and [`capacity`](Self::capacity) and [`clock`](Self::clock) give it a table of its
/// own: set them first.
#[derive(Clone)]
pub struct RateLimit {
    pub(super) count: u32,
    pub(super) period: Duration,
    pub(super) burst: Option<u32>,
    pub(super) quota: Quota,
    pub(super) table: Arc<Table>,
    pub(super) clock: Option<Arc<Clock>>,
    pub(super) key: KeyBy,
    /// Covered paths start with this.
    pub(super) prefix: Cow<'static, str>,
    /// Covered methods; empty: all.
    pub(super) methods: Vec<Method>,
    /// Covered routes (pattern and method); empty: all.
    pub(super) routes: Vec<(&'static str, Method)>,
    pub(super) message: Option<Cow<'static, str>>,
}

impl RateLimit {
    /// `count` requests each `period` for each client, and `count` at once (see
    /// [`burst`](Self::burst)); a count of 0 is taken as 1. It covers every request of
    /// the app and keys by [client address](crate::ClientAddr) until told otherwise.
    pub fn new(count: u32, period: Duration) -> Self {
        RateLimit {
            count,
            period,
            burst: None,
            quota: Quota::new(count, period, count),
            table: Arc::new(Table::new(DEFAULT_CELLS)),
            clock: None,
            key: KeyBy::ClientAddr,
            prefix: Cow::Borrowed("/"),
            methods: Vec::new(),
            routes: Vec::new(),
            message: None,
        }
    }

    /// `count` requests a second.
    pub fn per_second(count: u32) -> Self {
        Self::new(count, Duration::from_secs(1))
    }

    /// `count` requests a minute.
    pub fn per_minute(count: u32) -> Self {
        Self::new(count, Duration::from_secs(60))
    }

    /// `count` requests an hour.
    pub fn per_hour(count: u32) -> Self {
        Self::new(count, Duration::from_secs(3600))
    }

    /// How many requests a client with its whole budget may send at once (default:
    /// the count, so `per_minute(10)` lets 10 through at once, then one every 6 s);
    /// 0 is taken as 1. Its budget comes back at the rate, up to the burst.
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = Some(burst);
        self.quota = Quota::new(self.count, self.period, burst);
        self
    }

    /// Each client's budget is its [client address](crate::ClientAddr): the peer, or the
    /// client a [trusted proxy](crate::App::trusted_proxies) names; an IPv6 client by
    /// its `/64`, which one host holds whole. The default.
    pub fn key_by_client_addr(mut self) -> Self {
        self.key = KeyBy::ClientAddr;
        self
    }

    /// Each client's budget is the subject of its [`BearerToken`](crate::BearerToken),
    /// checked with the app's [secret key](crate::App::secret_key) (which the app must
    /// then have); a request without a valid token spends its client address's budget,
    /// so forged tokens share one budget per address.
    pub fn key_by_bearer_subject(mut self) -> Self {
        self.key = KeyBy::BearerSubject;
        self
    }

    /// Each client's budget is the key `key` computes from the request (an API key's
    /// header, a tenant); `None` leaves the request outside this limit.
    ///
    /// ```
    /// let limit = kiln::RateLimit::per_second(100)
    ///     .key_by(|req| req.header_str("x-api-key").map(str::to_owned));
    /// # let _ = limit;
    /// ```
    pub fn key_by<K: Hash>(mut self, key: impl Fn(&Request<'_>) -> Option<K> + Send + Sync + 'static) -> Self {
        self.key = KeyBy::Custom(Arc::new(move |req, table| key(req).map(|k| table.hash(&k))));
        self
    }

    /// Covers the paths that start with `prefix` only (`/api/`).
    pub fn path_prefix(mut self, prefix: impl Into<Cow<'static, str>>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Covers requests with these methods only (`["POST"]`).
    pub fn methods<I: IntoIterator<Item = Method>>(mut self, methods: I) -> Self {
        self.methods = methods.into_iter().collect();
        self
    }

    /// Covers the requests routed to `R` (its pattern and method) only; call it again
    /// to add routes. A `HEAD` counts against its `GET` route.
    pub fn route<R: Route>(mut self) -> Self {
        self.routes.push((R::PATTERN, R::METHOD));
        self
    }

    /// The refusal's message (default: `too many requests: try again in N seconds`).
    pub fn message(mut self, message: impl Into<Cow<'static, str>>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// The size of the table that holds every client's budget, in cells of 8 bytes
    /// (default 32,768: 256 KiB); a fresh table. More cells make it rarer that two
    /// busy clients share a cell (see the module's documentation).
    pub fn capacity(mut self, cells: usize) -> Self {
        self.table = Arc::new(Table::new(cells));
        self
    }

    /// Where the limit reads the time: the time since some fixed moment of the clock's
    /// own (default: the monotonic clock). For tests that move time on instead of
    /// waiting; a fresh table.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::time::Duration;
    ///
    /// let seconds = Arc::new(AtomicU64::new(0));
    /// let clock = Arc::clone(&seconds);
    /// let limit = kiln::RateLimit::per_minute(1)
    ///     .clock(move || Duration::from_secs(clock.load(Ordering::Relaxed)));
    /// assert!(limit.check("ada").is_ok());
    /// assert_eq!(limit.check("ada").unwrap_err().retry_after(), Duration::from_secs(60));
    /// seconds.store(60, Ordering::Relaxed);
    /// assert!(limit.check("ada").is_ok());
    /// ```
    pub fn clock(mut self, clock: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        self.table = Arc::new(Table::new(self.table.len()));
        self.clock = Some(Arc::new(clock));
        self
    }

    /// How many cells its table holds: fixed, whatever number of clients it has seen,
    /// so its memory stays `cells × 8` bytes.
    pub fn cells(&self) -> usize {
        self.table.len()
    }
}

impl fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimit")
            .field("count", &self.count)
            .field("period", &self.period)
            .field("burst", &self.burst.unwrap_or(self.count))
            .field("key", &self.key)
            .field("prefix", &self.prefix)
            .field("methods", &self.methods)
            .field("routes", &self.routes)
            .field("cells", &self.table.len())
            .finish_non_exhaustive()
    }
}
