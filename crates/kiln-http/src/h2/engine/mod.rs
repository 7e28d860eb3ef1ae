//! kiln's own HTTP/2 engine (RFC 9113): frames parsed straight from the connection's
//! read buffer ([`recv`], [`control`]), one task per connection, its streams in a small slab
//! ([`stream`], [`state`]), responses and their bodies written straight into one write
//! buffer under the flow-control windows ([`send`]), and one loop that reads, calls
//! the service for every request made whole and writes each batch with one system
//! call ([`conn`]; the calls, their answers and deadlines in [`calls`], the calls
//! under way, cancelled when their stream is reset, in [`running`]). HPACK decoding
//! is [`hpack`](super::hpack)'s; the encoder is [`response_head`](super::response_head)'s,
//! which keeps no table. A route that
//! streams its request body ([`BodyMode::Stream`](crate::BodyMode::Stream)) is called
//! as soon as its head is read; its DATA is handed over as it comes, and its window is
//! given back only as the handler takes it, so a stalled handler holds one window.

mod calls;
mod conn;
mod control;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod fuzz;
mod recv;
mod running;
mod send;
pub(crate) mod state;
mod stream;

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Instant, timeout_at};

use crate::service::Service;
use crate::transport::Transport;
use crate::worker::Worker;

/// Serves one HTTP/2 connection (its preface not yet read) until it closes.
/// `slot` is the one `Worker::open_connection` gave it; it is closed here.
pub(crate) async fn serve<S: Service, T: Transport>(
    io: T,
    peer: SocketAddr,
    service: Rc<S>,
    worker: Rc<Worker>,
    slot: usize,
) {
    let hsts = io.hsts().map(Box::from);
    let mut conn = conn::Conn {
        io,
        service: &*service,
        worker: &worker,
        peer,
        hsts,
        slot,
        state: state::State::new(&worker.limits),
        read: Vec::new(),
        to_call: Vec::new(),
    };
    conn.run().await;
    linger(&mut conn.io).await;
    worker.close_connection(slot);
}

/// How long a closed connection's input is still read away (see [`linger`]).
const LINGER_TIME: Duration = Duration::from_secs(2);
/// Most input read away from a closed connection.
const LINGER_BYTES: usize = 256 * 1024;

/// Closes the write side, then reads and discards what the peer still sends for a
/// bounded time: closing with input unread would reset the connection, and the reset
/// could destroy the last frames (a `GOAWAY` that says why) before the peer reads them.
async fn linger<T: Transport>(io: &mut T) {
    let deadline = Instant::now() + LINGER_TIME;
    if !matches!(timeout_at(deadline, io.shutdown()).await, Ok(Ok(()))) {
        return;
    }
    let mut scratch = vec![0u8; 4096];
    let mut discarded = 0;
    while discarded < LINGER_BYTES {
        match timeout_at(deadline, io.read(&mut scratch)).await {
            Ok(Ok(n)) if n > 0 => discarded += n,
            _ => return,
        }
    }
}
