//! kiln-demo: the benchmark endpoints and the demo site, one binary.

mod bench_first;
mod bench_live;
mod bench_routes;
mod bench_sse;
mod bench_upload;
mod bench_validate;
mod database;
mod https;
mod logging;
mod site;
mod state;
mod techempower;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use kiln::access_log::{AccessLog, LogFormat, LogTarget};
use kiln::{App, Compression, SecureHeaders};
use kiln_http::Server;

/// Serve the kiln demo site and the benchmark endpoints.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "KILN_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Worker threads, each with its own event loop and listener [default: one per core].
    #[arg(long, env = "KILN_WORKERS")]
    workers: Option<usize>,
    /// Seconds in-flight requests get to finish after SIGTERM or SIGINT.
    #[arg(long, env = "KILN_SHUTDOWN_GRACE", default_value_t = 10)]
    shutdown_grace: u64,
    #[command(flatten)]
    edge: EdgeArgs,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    db: database::DbArgs,
    #[command(flatten)]
    site: site::settings::SiteArgs,
    #[command(flatten)]
    tls: https::TlsArgs,
    #[command(flatten)]
    observe: ObserveArgs,
    /// Folder served at `/static/` (`asset!` links under their hashed names, immutable).
    #[arg(long, env = "KILN_PUBLIC", default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/public"))]
    public: std::path::PathBuf,
    /// Access log: a file path, `-` for stdout, or `off`. Reopened on SIGHUP.
    #[arg(long, env = "KILN_ACCESS_LOG", default_value = "off")]
    access_log: String,
    /// Access log lines as JSON objects instead of Combined Log Format.
    #[arg(long, env = "KILN_ACCESS_LOG_JSON")]
    access_log_json: bool,
}

/// Behind a load balancer: who to believe about the client, and how to leave the pool.
#[derive(Debug, clap::Args)]
struct EdgeArgs {
    /// Connections from trusted proxies open with a PROXY protocol (v1 or v2) header.
    #[arg(long, env = "KILN_PROXY_PROTOCOL")]
    proxy_protocol: bool,
    /// Proxies believed about the client (PROXY header, Forwarded, X-Forwarded-For):
    /// addresses or CIDR ranges, comma-separated.
    #[arg(long, env = "KILN_TRUSTED_PROXY", default_value = "")]
    trusted_proxy: kiln_http::TrustedProxies,
    /// Seconds SIGTERM keeps serving, with /healthz answering 503, before it stops accepting.
    #[arg(long, env = "KILN_DRAIN_DELAY", default_value_t = kiln_http::DRAIN_DELAY.as_secs_f64())]
    drain_delay: f64,
}

/// The connection engine's limits; each defaults to the `kiln_http` constant it names.
#[derive(Debug, clap::Args)]
struct LimitArgs {
    /// Largest request body in bytes (413 beyond).
    #[arg(long, env = "KILN_MAX_BODY", default_value_t = kiln_http::MAX_BODY_BYTES)]
    max_body: usize,
    /// Largest request head in bytes (431 beyond).
    #[arg(long, env = "KILN_MAX_HEAD", default_value_t = kiln_http::MAX_HEAD_BYTES)]
    max_head: usize,
    /// Seconds from a request's first byte until its head must be complete (408).
    #[arg(long, env = "KILN_HEADER_TIMEOUT", default_value_t = kiln_http::HEADER_TIMEOUT.as_secs())]
    header_timeout: u64,
    /// Seconds an idle keep-alive connection stays open.
    #[arg(long, env = "KILN_IDLE_TIMEOUT", default_value_t = kiln_http::IDLE_TIMEOUT.as_secs())]
    idle_timeout: u64,
    /// Open connections per worker; more are accepted and closed at once.
    #[arg(long, env = "KILN_MAX_CONNECTIONS", default_value_t = kiln_http::MAX_CONNECTIONS_PER_WORKER)]
    max_connections: usize,
}

/// What the demo reports about itself beyond the access log; both off by default.
#[derive(clap::Args, Debug)]
struct ObserveArgs {
    /// Serve `/metrics` in Prometheus' text format (requests by route and status,
    /// latency, open connections, the database's queued calls, bus lag).
    #[arg(long, env = "KILN_METRICS")]
    metrics: bool,
    /// Run each request in a `tracing` span (`kiln::request`, with method and path).
    #[arg(long, env = "KILN_REQUEST_SPANS")]
    request_spans: bool,
}

impl LimitArgs {
    fn limits(&self) -> kiln_http::Limits {
        kiln_http::Limits {
            max_body_bytes: self.max_body,
            max_head_bytes: self.max_head,
            header_timeout: Duration::from_secs(self.header_timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
            max_connections_per_worker: self.max_connections,
            ..kiln_http::Limits::default()
        }
    }
}

/// The access log the flags ask for. A path that cannot be appended to (a typo, a
/// missing folder, no permission) is refused here, before serving, as a bad
/// certificate is: `AccessLog::open` would drop every line and retry.
fn access_log(args: &Args) -> Result<Option<AccessLog>, String> {
    let Some(target) = LogTarget::from_arg(&args.access_log) else { return Ok(None) };
    let format = if args.access_log_json { LogFormat::Json } else { LogFormat::Combined };
    AccessLog::try_open(target, format).map(Some).map_err(|e| format!("--access-log: {e}"))
}

/// The benchmark endpoints and their static files, answered exactly as the peers they
/// are measured against answer (no headers for browsers they never meet); the site's
/// pages get `SecureHeaders` and compression.
fn is_benchmark(path: &str) -> bool {
    const PATHS: [&str; 10] = [
        "/pong",
        "/hello",
        "/plaintext",
        "/json",
        "/bigtable",
        "/db",
        "/queries",
        "/fortunes",
        "/updates",
        "/cached-queries",
    ];
    PATHS.contains(&path)
        || path.starts_with("/mix/")
        || path.starts_with("/bench/")
        || path.starts_with("/static/") && !path.starts_with("/static/site.")
}

/// The benchmark endpoints that answer uncompressed, as their peers do: all but the
/// static files, which are compressed when compressible and over the threshold, as
/// nginx's `gzip on` does. None of the contract's files is (the 13-byte `hello.txt`,
/// binary `.bin` files, a PNG), so their rows are unchanged, while the site's own
/// stylesheet and scripts, and the saved copy of a page that `kilnbench.compress`
/// serves to weigh compression alone, are compressed per request.
fn is_uncompressed_benchmark(path: &str) -> bool {
    is_benchmark(path) && !path.starts_with("/static/")
}

fn main() -> ExitCode {
    let args = Args::parse();
    logging::init();
    let log = match access_log(&args) {
        Ok(log) => log,
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut server = Server::new()
        .listen(args.listen)
        .limits(args.limits.limits())
        .shutdown_grace(Duration::from_secs(args.shutdown_grace))
        .proxy_protocol(args.edge.proxy_protocol)
        .trusted_proxies(args.edge.trusted_proxy.clone())
        .drain_delay(Duration::from_secs_f64(args.edge.drain_delay.max(0.0)));
    server = args.tls.apply(server);
    if let Some(n) = args.workers {
        server = server.workers(n);
    }
    let databases = match args.db.open() {
        Ok(databases) => databases,
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    let settings = match args.site.settings(args.listen, args.tls.enabled()) {
        Ok(settings) => std::sync::Arc::new(settings),
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = site::seed::seed_if_empty(&databases.main) {
        eprintln!("kiln-demo: seeding the site: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(Err(e)) = log.as_ref().map(AccessLog::reopen_on_sighup) {
        eprintln!("kiln-demo: SIGHUP handler: {e}");
    }
    let metrics = args.observe.metrics.then(|| kiln::Metrics::new().database(&databases.main));
    let app = App::new({
        let settings = std::sync::Arc::clone(&settings);
        move |_worker| state::Worker::new(&databases, &settings)
    })
    .access_log(log)
    .trusted_proxies(args.edge.trusted_proxy)
    .mount(kiln::healthz(server.readiness()))
    .mount(bench_first::mount)
    .mount(bench_routes::mount)
    .mount(bench_validate::mount)
    .mount(bench_sse::mount)
    .mount(bench_live::mount)
    .mount(bench_upload::mount)
    .mount(techempower::mount)
    .mount(site::mount)
    .mount(|app| settings.apply(app))
    .secure_headers(SecureHeaders::new().except(is_benchmark))
    .compression(Compression::new().except(is_uncompressed_benchmark))
    // The stylesheet is fetched while a page renders (HTTP/2 only), and its file checked here.
    .early_hints(&site::ASSET_LINKS);
    let app = match metrics {
        Some(metrics) => app.metrics(metrics),
        None => app,
    };
    let app = if args.observe.request_spans { app.request_spans() } else { app };
    let app = app.try_assets_linked(&args.public, &site::ASSET_LINKS);
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("kiln-demo: --public: {e}");
            return ExitCode::FAILURE;
        }
    };
    let handle = match kiln::serve(app, server) {
        Ok(handle) => handle,
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    let redirect = match args.tls.start_redirect(handle.local_addr().port()) {
        Ok(redirect) => redirect,
        Err(e) => {
            eprintln!("kiln-demo: --redirect-http: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(redirect) = &redirect {
        println!("kiln-demo redirecting http://{} to HTTPS", redirect.local_addr());
    }
    let scheme = if args.tls.enabled() { "https" } else { "http" };
    println!("kiln-demo listening on {scheme}://{}", handle.local_addr());
    // Flushes and stops the access log once the workers are done.
    let served = handle.run_until_signal();
    if let Some(redirect) = redirect {
        redirect.shutdown();
        let _ = redirect.wait();
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            ExitCode::FAILURE
        }
    }
}
