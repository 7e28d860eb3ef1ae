//! One HTTP/1.1 connection: read requests, call the service for each in order, encode
//! every response into one write buffer, and write it once per batch (pipelining).
//!
//! Here: the connection's state and its loop ([`Conn::run`]), and the tasks it lives in
//! (an HTTP task, a streamed body's own task). `read`: waiting for a request, reading its
//! head and body, the buffering budget they hold; `answer`: one request from its head to
//! its encoded response, the service called with panics caught; `write`: encoding and
//! writing responses (buffered, large, file and streamed bodies); `upload`: a body the
//! service streams; `close`: refusing a request, lingering, and the end of a connection
//! (handing an upgraded one to its protocol).

mod answer;
mod close;
mod read;
#[cfg(test)]
mod tests;
mod upload;
mod write;

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;

use http::StatusCode;
use tokio::time::Sleep;

use crate::rejection::Rejection;
use crate::response::BodyStream;
use crate::service::Service;
use crate::transport::Transport;
use crate::worker::{Bufs, Worker};

/// Requests one connection answers in a row before letting the others run: a client
/// that pipelines thousands of requests in one write must not hold the worker.
const REQUESTS_PER_TURN: u32 = 16;
/// Bytes of responses one connection produces in a turn: once its write buffer holds
/// this much (or it wrote a body this large from where it lay), the turn ends, so a
/// client that pipelines large responses gets about one per turn, and what is
/// buffered stays bounded.
const TURN_BYTES: usize = 16 * 1024;
/// Answered when a request body or a response would take the worker past its
/// buffering budget (`Limits::max_buffered_bytes`).
const OVER_BUDGET: Rejection =
    Rejection { status: StatusCode::SERVICE_UNAVAILABLE, reason: "server busy: too much buffered, retry later" };

/// Why a connection stopped; each ends it, none is reported beyond it.
enum Stop {
    /// The peer closed, the keep-alive rules say close, or a limit or timeout struck.
    Done,
    Io,
}

impl From<io::Error> for Stop {
    fn from(_: io::Error) -> Self {
        Stop::Io
    }
}

type Flow<T = ()> = Result<T, Stop>;

/// Serves one accepted connection until it closes.
/// `slot` is the one `Worker::open_connection` gave it; it is closed here.
pub(crate) async fn serve<S: Service, T: Transport>(
    stream: T,
    peer: SocketAddr,
    service: Rc<S>,
    worker: Rc<Worker>,
    slot: usize,
) {
    let idle_deadline = worker.coarse_now() + worker.limits.idle_timeout;
    let idle_timer = Box::pin(tokio::time::sleep_until(idle_deadline));
    let bufs = Bufs::default();
    let conn = Conn {
        stream,
        peer,
        worker,
        bufs,
        start: 0,
        served: 0,
        idle_timer,
        slot,
        held: 0,
        lowat: false,
        turn_spent: false,
        streaming: None,
    };
    serve_http(conn, service).await;
}

/// Answers requests on `conn` until it closes, it is upgraded, or a response's body is
/// a stream, which goes on in a task of its own (see [`serve_stream`]).
async fn serve_http<S: Service, T: Transport>(mut conn: Conn<T>, service: Rc<S>) {
    let finished = conn.run(&*service).await.is_ok();
    if let Some(streaming) = conn.streaming.take().filter(|_| finished) {
        // A streamed body (an event stream) may go on for hours: it goes on in a task
        // sized for sending it alone, not in this one, whose future is sized for HTTP's
        // largest state (issue 23: ten thousand quiet SSE subscribers must cost about
        // what ten thousand idle connections do). The connection keeps its slot.
        tokio::task::spawn_local(serve_stream(conn, service, streaming));
        return;
    }
    conn.finish(finished).await;
}

/// Sends a streamed body whose head `conn` has encoded, then goes back to answering
/// requests on a new task if the connection stays open.
async fn serve_stream<S: Service, T: Transport>(mut conn: Conn<T>, service: Rc<S>, streaming: Streaming) {
    let sent = conn.send_stream(streaming.body, streaming.chunked).await;
    let finished = match sent {
        Ok(()) if streaming.keep_alive => {
            // Spawned rather than awaited: this task stays small while the stream runs.
            tokio::task::spawn_local(serve_http(conn, service));
            return;
        }
        Ok(()) => conn.flush().await.is_ok(),
        Err(_) => false,
    };
    // Boxed: the close's state would otherwise sit in the task while the stream runs.
    Box::pin(conn.finish(finished)).await;
}

/// A response body to stream, taken out of the request loop (see [`serve_stream`]).
struct Streaming {
    body: BodyStream,
    chunked: bool,
    /// Whether the connection reads the next request once the body has ended.
    keep_alive: bool,
}

struct Conn<T> {
    stream: T,
    peer: SocketAddr,
    worker: Rc<Worker>,
    bufs: Bufs,
    /// Where the request being read begins in `bufs.read`.
    start: usize,
    served: u64,
    /// One timer for the connection's whole life, moved forward on the coarse clock
    /// rather than created per request: pushing a deadline later touches no timer wheel.
    idle_timer: Pin<Box<Sleep>>,
    /// Where this connection parks its waker while idle (see `Worker::park`).
    slot: usize,
    /// Bytes of the worker's buffering budget this connection holds.
    held: usize,
    /// Whether `NOTSENT_LOWAT` is set: on the first write that cannot finish at once.
    lowat: bool,
    /// Whether this turn wrote a body of [`TURN_BYTES`] or more: it ends the turn.
    turn_spent: bool,
    /// A streamed body whose head is encoded, for `serve_http` to hand to its own task.
    streaming: Option<Streaming>,
}

impl<T: Transport> Conn<T> {
    async fn run<S: Service>(&mut self, service: &S) -> Flow {
        let mut in_a_row = 0;
        loop {
            // A connection holds buffers only between a request's first bytes and the
            // end of the batch it belongs to.
            if !self.bufs.is_allocated() || self.start == self.bufs.read.len() {
                if self.bufs.is_allocated() {
                    self.coalesce(self.bufs.write.len()).await;
                }
                self.flush().await?;
                if self.bufs.is_allocated() {
                    self.bufs.read.clear();
                }
                self.start = 0;
                if !self.wait_idle().await? {
                    return Ok(());
                }
                in_a_row = 0;
                self.turn_spent = false;
            } else if in_a_row == REQUESTS_PER_TURN || self.turn_spent || self.bufs.write.len() >= TURN_BYTES {
                // Pipelined requests are still buffered: send what is answered, then
                // wait for this connection's next turn (see `h1::turns`), the worker's
                // other connections going first.
                self.flush().await?;
                self.worker.turns.next().await;
                in_a_row = 0;
                self.turn_spent = false;
            }
            in_a_row += 1;
            let keep_alive = self.serve_one(service).await?;
            if let Some(streaming) = &mut self.streaming {
                // The body goes out from `serve_stream`, which then goes on as this
                // loop would have.
                streaming.keep_alive = keep_alive;
                return Ok(());
            }
            if !keep_alive {
                self.flush().await?;
                return Ok(());
            }
        }
    }
}
