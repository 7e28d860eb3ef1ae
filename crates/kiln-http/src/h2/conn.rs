//! One HTTP/2 connection: the handshake, then one loop that drives the `h2`
//! connection (reading frames, writing what the streams queued) and polls every stream
//! being answered, all in the connection's own task; and the connection's end, by a
//! graceful `GOAWAY` when the worker shuts down, the request cap is reached or the
//! connection idles, or an abrupt one when the peer misbehaves.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use h2::Reason;
use h2::server::{Builder, Connection};
use http::HeaderValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Instant, Sleep, sleep_until, timeout, timeout_at};

use super::meter::{Meter, Metered};
use super::shared::Shared;
use super::stream;
use crate::config::Limits;
use crate::service::Service;
use crate::transport::Transport;
use crate::worker::Worker;

/// Streams accepted in one turn before the connection lets the worker's others run: a
/// peer that opens streams as fast as it can must not hold the worker.
const STREAMS_PER_TURN: u32 = 64;
/// How long a connection that has sent `GOAWAY` and has no stream left may take to
/// close (the peer reading the last frames) before it is dropped.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// How long a closed connection's input is still read away (see [`linger`]).
const LINGER_TIME: Duration = Duration::from_secs(2);
/// Most input read away from a closed connection.
const LINGER_BYTES: usize = 256 * 1024;

/// The `h2` settings from the worker's limits.
fn builder(limits: &Limits) -> Builder {
    let mut builder = Builder::new();
    builder
        .max_concurrent_streams(limits.h2_max_concurrent_streams)
        .max_header_list_size(limits.h2_max_header_list_size)
        .initial_window_size(limits.h2_stream_window)
        .initial_connection_window_size(limits.h2_connection_window)
        .max_pending_accept_reset_streams(limits.h2_max_pending_accept_reset_streams)
        .max_local_error_reset_streams(Some(limits.h2_max_local_error_reset_streams));
    builder
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
    let hsts = io.hsts().and_then(|v| HeaderValue::from_bytes(v).ok());
    let meter = Rc::new(Meter::default());
    let mut io = Metered { io, meter: Rc::clone(&meter) };
    // Lent, not given: once `h2` is done with the connection, it is closed here.
    // The preface and the first SETTINGS are the connection's head: the same bound.
    let handshake = builder(&worker.limits).handshake::<_, Bytes>(&mut io);
    if let Ok(Ok(conn)) = timeout(worker.limits.header_timeout, handshake).await {
        let shared = Shared::new(Rc::clone(&worker), peer, hsts, meter);
        drive(conn, &*service, &shared, slot).await;
    }
    linger(&mut io.io).await;
    worker.close_connection(slot);
}

/// Closes the write side, then reads and discards what the peer still sends for a
/// bounded time: closing with input unread would reset the connection, and the reset
/// could destroy the last frames (a `GOAWAY` that says why) before the peer reads them.
pub(super) async fn linger<T: Transport>(io: &mut T) {
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

/// Accepts streams and answers them until the connection closes.
async fn drive<S: Service, T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut conn: Connection<T, Bytes>,
    service: &S,
    shared: &Shared,
    slot: usize,
) {
    let worker = &*shared.worker;
    let limits = &worker.limits;
    let mut streams = FuturesUnordered::new();
    let mut accepted = 0u64;
    let mut goaway: Option<Instant> = None;
    // Armed while no stream is being answered: the idle timeout, or, once `GOAWAY` has
    // gone, the wait for the close.
    let mut timer: Pin<Box<Sleep>> = Box::pin(sleep_until(worker.coarse_now() + limits.idle_timeout));
    let mut was_busy = false;
    poll_fn(|cx| {
        let mut turn = 0;
        loop {
            while let Poll::Ready(Some(())) = streams.poll_next_unpin(cx) {}
            if goaway.is_none() {
                if shared.meter.flooded() || shared.reset_flood() {
                    conn.abrupt_shutdown(Reason::ENHANCE_YOUR_CALM);
                    goaway = Some(Instant::now());
                } else if worker.shutting_down.get()
                    || accepted >= limits.max_requests_per_connection
                    || shared.closing()
                {
                    // In-flight streams finish; the peer sends new ones elsewhere
                    // (RFC 9113 §6.8).
                    conn.graceful_shutdown();
                    goaway = Some(Instant::now());
                }
            }
            match conn.poll_accept(cx) {
                Poll::Ready(Some(Ok((request, respond)))) => {
                    accepted += 1;
                    was_busy = true;
                    streams.push(stream::serve(service, shared, request, respond));
                    turn += 1;
                    if turn == STREAMS_PER_TURN {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    continue;
                }
                // The peer closed, a connection error (the `GOAWAY` sent), or the
                // graceful close done.
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => {}
            }
            if !streams.is_empty() {
                was_busy = true;
            } else {
                let deadline = match goaway {
                    Some(at) => at + CLOSE_WAIT,
                    None if was_busy => worker.coarse_now() + limits.idle_timeout,
                    None => timer.deadline(),
                };
                was_busy = false;
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                if timer.as_mut().poll(cx).is_ready() {
                    if goaway.is_some() {
                        return Poll::Ready(());
                    }
                    conn.graceful_shutdown();
                    goaway = Some(Instant::now());
                    continue;
                }
            }
            worker.park(slot, cx.waker());
            return Poll::Pending;
        }
    })
    .await;
}
