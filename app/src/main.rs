//! kiln-demo: the benchmark endpoints and the demo site, one binary.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use kiln_http::{Request, Response, Server, StatusCode, service_fn};

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
}

fn demo(req: Request<'_>, res: &mut Response) {
    let body: &'static [u8] = match req.path() {
        "/pong" => b"PONG",
        "/hello" => b"Hello World!",
        "/plaintext" => b"Hello, World!",
        _ => {
            res.set_status(StatusCode::NOT_FOUND);
            b"not found\n"
        }
    };
    res.set_content_type("text/plain");
    res.set_body_static(body);
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut server = Server::new().listen(args.listen).shutdown_grace(Duration::from_secs(args.shutdown_grace));
    if let Some(n) = args.workers {
        server = server.workers(n);
    }
    let handle = match server.serve(|_worker| service_fn(demo)) {
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
