//! Answers every request, whatever its method and path, with `200` and the request's
//! body: the test subject that conformance suites such as h1spec expect
//! (`bench/probe/probe.py h1spec`).
//!
//! ```sh
//! cargo run --release -p kiln-http --example echo -- 127.0.0.1:8080
//! ```

use kiln_http::{Request, Response, Server, service_fn};

fn echo(req: Request<'_>, res: &mut Response) {
    res.set_content_type("application/octet-stream");
    res.body_mut().extend_from_slice(req.body());
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8080".into());
    let server = Server::new().listen(addr.as_str()).workers(1).serve(|_| service_fn(echo))?;
    println!("echo listening on http://{}", server.local_addr());
    server.run_until_signal()?;
    Ok(())
}
