//! HTTP/2 (RFC 9113): h2 by ALPN over TLS and h2c with prior knowledge on the plain
//! port, on the `h2` crate (framing, HPACK, flow control; fuzzed and h2spec-clean).
//!
//! A connection is one task on its worker, like an HTTP/1.1 one: [`conn`] drives the
//! `h2` connection and polls every stream of it in the same task (no spawn per stream,
//! no hand-off between threads). Each stream ([`stream`]) is served with the same
//! [`Request`](crate::Request) view and [`Response`](crate::Response) as HTTP/1.1: its
//! method, target and headers are written into a buffer of its own ([`request`]), the
//! response's header lines become HPACK fields ([`encode`]) and its body leaves as the
//! peer's flow-control window allows ([`send`]). [`preface`] tells h2c from HTTP/1 on
//! the plain port; [`meter`] counts what a peer sends, against floods.

mod conn;
mod encode;
mod engine;
mod fields;
mod frame;
mod hpack;
mod meter;
mod preface;
mod request;
mod response_head;
mod send;
mod shared;
mod stream;

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::OnceLock;

#[cfg(feature = "fuzzing")]
pub(crate) use engine::fuzz::frames as fuzz_frames;
pub(crate) use preface::{Wire, refuse, sniff};

use crate::service::Service;
use crate::transport::Transport;
use crate::worker::Worker;

/// Whether connections go to kiln's own engine ([`engine`]) rather than the `h2`
/// crate's ([`conn`]): `KILN_H2_ENGINE=own`, read once. Off by default until the own
/// engine passes everything the `h2` one does.
fn own_engine() -> bool {
    static OWN: OnceLock<bool> = OnceLock::new();
    *OWN.get_or_init(|| std::env::var_os("KILN_H2_ENGINE").is_some_and(|v| v == "own"))
}

/// Serves one HTTP/2 connection (its preface not yet read) until it closes.
/// `slot` is the one `Worker::open_connection` gave it; it is closed here.
pub(crate) async fn serve<S: Service, T: Transport>(
    io: T,
    peer: SocketAddr,
    service: Rc<S>,
    worker: Rc<Worker>,
    slot: usize,
) {
    if own_engine() {
        engine::serve(io, peer, service, worker, slot).await
    } else {
        conn::serve(io, peer, service, worker, slot).await
    }
}
