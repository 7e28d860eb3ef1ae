//! kiln-demo: the benchmark endpoints and the demo site, one binary.

mod bench_routes;
mod db_routes;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use kiln::App;
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
    db: db_routes::DbArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut server = Server::new().listen(args.listen).shutdown_grace(Duration::from_secs(args.shutdown_grace));
    if let Some(n) = args.workers {
        server = server.workers(n);
    }
    let database = match args.db.open() {
        Ok(database) => database,
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    let app = App::new(move |_worker| database.worker()).mount(bench_routes::mount).mount(db_routes::mount);
    let handle = match kiln::serve(app, server) {
        Ok(handle) => handle,
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("kiln-demo listening on http://{}", handle.local_addr());
    match handle.run_until_signal() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiln-demo: {e}");
            ExitCode::FAILURE
        }
    }
}
