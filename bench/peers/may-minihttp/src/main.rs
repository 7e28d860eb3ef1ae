//! may-minihttp peer: the kiln benchmark contract on one may worker.
//! (may-minihttp writes the Server, Date and Content-Length headers itself.)

use std::io;

use bytes::BufMut;
use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};
use serde::Serialize;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Clone)]
struct Peer;

impl HttpService for Peer {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        match req.path() {
            "/pong" => {
                rsp.header("Content-Type: text/plain").body("PONG");
            }
            "/hello" => {
                rsp.header("Content-Type: text/plain").body("Hello World!");
            }
            "/plaintext" => {
                rsp.header("Content-Type: text/plain").body("Hello, World!");
            }
            "/json" => {
                rsp.header("Content-Type: application/json");
                serde_json::to_writer(rsp.body_mut().writer(), &Message { message: "Hello, World!" })?;
            }
            _ => {
                rsp.status_code(404, "Not Found");
            }
        }
        Ok(())
    }
}

struct Factory;

impl HttpServiceFactory for Factory {
    type Service = Peer;

    fn new_service(&self, _id: usize) -> Self::Service {
        Peer
    }
}

fn main() {
    may::config().set_workers(1).set_pool_capacity(1000).set_stack_size(0x1000);
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let server = Factory.start(("127.0.0.1", port)).expect("bind");
    server.wait();
}
