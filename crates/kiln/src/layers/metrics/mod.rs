//! [`Metrics`]: an opt-in `/metrics` endpoint in Prometheus' text format. Each worker
//! counts into its own counters, written by that worker alone (plain loads and
//! stores, no locked instruction, no cache line shared with another worker); a scrape
//! reads and sums every worker's.

mod counters;
mod render;

use std::sync::{Arc, Mutex};

use kiln_http::Request;

pub(crate) use counters::{Counting, WorkerCounters};

/// Serves the app's metrics at a path, in the Prometheus text exposition format;
/// give it with [`App::metrics`](crate::App::metrics).
///
/// - `kiln_requests_total{route, status}`: requests answered, by route pattern
///   (`(unmatched)` for none) and status class (`2xx`, ...);
/// - `kiln_request_duration_seconds`: a histogram of the time from routing to the
///   handler's answer (a streamed body's streaming is not counted);
/// - `kiln_requests_in_flight`: requests being answered now;
/// - `kiln_workers`: workers counting;
/// - `kiln_open_connections`: connections open now (read from the engine, which
///   counts them per worker anyway);
/// - `kiln_bus_lagged_messages_total`: bus messages subscribers missed by falling
///   behind ([`Lagged`](crate::realtime::Lagged));
/// - `kiln_db_queued_calls`: database calls waiting (queued for SQLite, in flight on
///   PostgreSQL), with `Metrics::database` (feature `sqlite` or `postgres`).
///
/// The scrape itself is not counted. Without `Metrics` no request does any of this.
///
/// ```
/// use kiln::{App, Metrics, Route};
///
/// #[derive(Route)]
/// #[route("/pong")]
/// struct Pong;
///
/// async fn pong(_: Pong) -> &'static str { "PONG" }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(pong).metrics(Metrics::new()));
/// client.get(&Pong);
/// let text = client.get("/metrics").text();
/// assert!(text.contains(r#"kiln_requests_total{route="/pong",status="2xx"} 1"#), "{text}");
/// ```
#[derive(Debug, Clone)]
pub struct Metrics {
    path: String,
    registry: Arc<Registry>,
    /// The database whose queue is reported.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    database: Option<crate::db::Database>,
}

/// Every worker's counters, and the route patterns they count by.
#[derive(Debug, Default)]
struct Registry {
    workers: Mutex<Vec<Arc<WorkerCounters>>>,
    routes: Mutex<Vec<String>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Metrics at `/metrics`.
    pub fn new() -> Self {
        Metrics {
            path: "/metrics".to_owned(),
            registry: Arc::default(),
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            database: None,
        }
    }

    /// Reports the calls waiting for `database` too (`kiln_db_queued_calls`: queued for
    /// SQLite's threads, or in flight on PostgreSQL's connections).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub fn database(mut self, database: &crate::db::Database) -> Self {
        self.database = Some(database.clone());
        self
    }

    /// The calls waiting for the database, when there is one to ask.
    fn queued_calls(&self) -> Option<usize> {
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        if let Some(database) = &self.database {
            return database.queued_calls();
        }
        None
    }

    /// Serves them at `path` instead (`/internal/metrics`). Keep it from the public
    /// internet: a proxy rule, or a listener of its own.
    pub fn path(mut self, path: &str) -> Self {
        self.path = path.to_owned();
        self
    }

    /// Counters for one more worker, over the app's route patterns.
    pub(crate) fn register<'p>(&self, patterns: impl Iterator<Item = &'p str>) -> Arc<WorkerCounters> {
        let patterns: Vec<String> = patterns.map(str::to_owned).collect();
        let counters = Arc::new(WorkerCounters::new(patterns.len()));
        let mut routes = self.registry.routes.lock().unwrap_or_else(|e| e.into_inner());
        if routes.is_empty() {
            *routes = patterns;
        }
        self.registry.workers.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::clone(&counters));
        counters
    }

    /// Whether the request is a scrape: the path first, so that most requests are
    /// told apart by one comparison and their method is not read.
    pub(crate) fn is_scrape(&self, req: Request<'_>, path: &str) -> bool {
        path == self.path && matches!(req.method(), "GET" | "HEAD")
    }

    /// Answers a scrape: every worker's counters summed.
    pub(crate) fn render(&self, res: &mut kiln_http::Response) {
        let workers = self.registry.workers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let routes = self.registry.routes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        res.set_content_type("text/plain; version=0.0.4; charset=utf-8");
        render::render(&routes, &workers, self.queued_calls(), res.body_mut());
    }
}
