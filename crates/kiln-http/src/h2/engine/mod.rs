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
//! A CONNECT answered `2xx` with an upgrade callback (a WebSocket, RFC 8441) makes its
//! stream a [`tunnel`]: both directions at once, each under its window, the callback
//! run beside the calls.

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
mod tunnel;

use std::future::Future;
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
///
/// Not an `async fn`: an async fn's arguments stay in its future beside the locals
/// they are moved into, and this future is what every idle connection holds. The
/// connection is built here and the future only owns it.
pub(crate) fn serve<S: Service, T: Transport>(
    io: T,
    peer: SocketAddr,
    service: Rc<S>,
    worker: Rc<Worker>,
    slot: usize,
) -> impl Future<Output = ()> {
    let state = state::State::new(&worker.limits, worker.limits.h2_extended_connect && service.extended_connect());
    let clock = conn::Clock::new(&worker);
    let mut conn = conn::Conn { io, service, worker, peer, slot, state, read: Vec::new(), to_call: None, clock };
    async move {
        conn.run().await;
        // Boxed: its timers would otherwise widen every connection's future.
        Box::pin(linger(&mut conn.io)).await;
        conn.worker.close_connection(conn.slot);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limits;
    use crate::service::service_fn;

    #[tokio::test]
    async fn an_idle_connection_s_future_stays_small() {
        // Every idle HTTP/2 connection holds this future for its whole life, besides its
        // task, its socket's registration and its timer: 1,064 bytes here when an idle
        // h2c connection cost 1.97 KiB in all (nginx's: 1.59), 560 at 1.4 KiB. A field
        // or a local kept across the wait costs every idle connection its bytes.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let io = tokio::net::TcpStream::connect(addr).await.unwrap();
        let worker = Rc::new(Worker::new(Limits::default()));
        let service = Rc::new(service_fn(|_req, _res: &mut crate::Response| {}));
        let future = serve(io, addr, service, worker, 0);
        let size = std::mem::size_of_val(&future);
        eprintln!("the connection's future: {size} bytes");
        assert!(size <= FUTURE_BOUND, "the connection's future grew to {size} bytes");
    }

    const FUTURE_BOUND: usize = 600;
}
