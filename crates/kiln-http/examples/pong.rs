//! The smallest kiln-http server: `/pong`, `/hello` and `/plaintext` straight on the
//! `Service` trait, without the framework. Used to measure what the engine alone
//! costs (idle memory, and the framework's routing overhead on `/pong`).
//!
//! ```sh
//! cargo run --release -p kiln-http --example pong -- 127.0.0.1:8080 1
//! ```

use kiln_http::{Request, Response, Server, StatusCode, service_fn};

fn answer(req: Request<'_>, res: &mut Response) {
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8080".into());
    let workers = args.next().map_or(Ok(1), |w| w.parse())?;
    let server = Server::new().listen(addr.as_str()).workers(workers).serve(|_| service_fn(answer))?;
    println!("pong listening on http://{}", server.local_addr());
    server.run_until_signal()?;
    Ok(())
}
