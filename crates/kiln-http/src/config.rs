//! Limits and timeouts, each a named default that a deployment may change.

use std::time::Duration;

/// Longest request line (method, target, version) before `414 URI Too Long`.
pub const MAX_REQUEST_LINE: usize = 8 * 1024;
/// Largest request head (request line and every header) before
/// `431 Request Header Fields Too Large`.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most header fields in one request before `431 Request Header Fields Too Large`.
pub const MAX_HEADERS: usize = 100;
/// Largest request body before `413 Content Too Large`, for bodies read whole; a
/// route that streams its body sets its own ([`BodyMode::Stream`](crate::BodyMode)).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Time from a request's first byte until its head must be complete (`408`, then close).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Time an idle keep-alive connection is kept open waiting for its next request
/// (kept on a clock that ticks once a second, so good to about a second).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a request body may make no progress (like nginx's
/// `client_body_timeout`: a slow but steady upload is read to its end, one that stalls
/// gets `408` and a close), and the longest a response may wait for a client to accept
/// more of it (like nginx's `send_timeout`, so a slow reader still gets a large file
/// whole).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Time a TLS client has from connecting until its handshake is complete; one that
/// sends nothing, or dribbles its hello, is closed then (feature `tls`).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Requests answered on one connection before it is closed.
pub const MAX_REQUESTS_PER_CONNECTION: u64 = 1_000_000;
/// Open connections one worker holds; further ones are accepted, answered `503` and
/// closed at once.
pub const MAX_CONNECTIONS_PER_WORKER: usize = 25_000;
/// Bytes one worker's connections may hold at once in request bodies being read and
/// in large responses being written; beyond it a request gets `503` with
/// `Retry-After`. Bounds the memory that stalled uploads and unread responses pin;
/// sized so that 100 connections each writing a page of about 1 MiB fit (at 64 MiB,
/// `/bigtable` under 100 connections got some 503s).
pub const MAX_BUFFERED_BYTES: usize = 128 * 1024 * 1024;
/// Time SIGTERM keeps a server accepting, with its [`Readiness`](crate::Readiness)
/// saying "draining" (a `/healthz` answering 503), before it stops accepting. None by
/// default; behind a load balancer, set it to what the balancer needs to notice
/// (health-check interval times failures to mark a server down, plus one interval).
pub const DRAIN_DELAY: Duration = Duration::from_secs(0);
/// Time given to in-flight requests after SIGTERM or SIGINT before the process exits.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

// HTTP/2 (RFC 9113). A stream's body obeys `MAX_BODY_BYTES` (`413`, then
// `RST_STREAM(NO_ERROR)`), its send side `BODY_TIMEOUT` (`RST_STREAM(CANCEL)` when the
// peer opens no window in time), and a connection's streams count against
// `MAX_REQUESTS_PER_CONNECTION` (then a graceful `GOAWAY`).

/// Streams one HTTP/2 connection may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`);
/// a stream beyond it is refused with `RST_STREAM(REFUSED_STREAM)`.
pub const H2_MAX_CONCURRENT_STREAMS: u32 = 128;
/// Largest decoded header list of one HTTP/2 request (`SETTINGS_MAX_HEADER_LIST_SIZE`,
/// names and values plus 32 bytes each); a larger one is refused (`431` or a reset).
pub const H2_MAX_HEADER_LIST_SIZE: u32 = 16 * 1024;
/// Bytes of request body one HTTP/2 stream may send before the server reads them
/// (`SETTINGS_INITIAL_WINDOW_SIZE`).
pub const H2_STREAM_WINDOW: u32 = 1024 * 1024;
/// Bytes of request bodies one HTTP/2 connection may send before the server reads them
/// (the connection's flow-control window).
pub const H2_CONNECTION_WINDOW: u32 = 1024 * 1024;
/// Streams an HTTP/2 peer may reset before they are answered, beyond one per stream
/// answered, before the connection is closed with `GOAWAY(ENHANCE_YOUR_CALM)` (the 2023
/// "rapid reset" attack): a browser cancels a few; the attack cancels every one. Counted
/// over the connection's life, so resets paced to arrive after each stream is taken
/// count too.
pub const H2_MAX_PENDING_ACCEPT_RESET_STREAMS: usize = 200;
/// Streams the server may have to reset for the peer's protocol errors before the
/// connection is closed with `GOAWAY(ENHANCE_YOUR_CALM)`.
pub const H2_MAX_LOCAL_ERROR_RESET_STREAMS: usize = 256;

// WebSocket over HTTP/2 (RFC 8441).

/// Whether HTTP/2 connections offer extended CONNECT (`SETTINGS_ENABLE_CONNECT_PROTOCOL`,
/// RFC 8441 §3), so that a browser opens its WebSockets as streams of the connection it
/// has rather than as new HTTP/1.1 connections. Offered only to a service that answers
/// it ([`Service::extended_connect`](crate::Service::extended_connect): a kiln app with
/// a WebSocket route); `false` turns it off for every service.
pub const H2_EXTENDED_CONNECT: bool = true;

/// Every limit and timeout of the connection engine. `Limits::default()` holds the
/// constants of this module.
#[derive(Debug, Clone)]
pub struct Limits {
    /// See [`MAX_REQUEST_LINE`].
    pub max_request_line: usize,
    /// See [`MAX_HEAD_BYTES`].
    pub max_head_bytes: usize,
    /// See [`MAX_HEADERS`].
    pub max_headers: usize,
    /// See [`MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// See [`HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// See [`IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    /// See [`BODY_TIMEOUT`].
    pub body_timeout: Duration,
    /// See [`HANDSHAKE_TIMEOUT`].
    pub handshake_timeout: Duration,
    /// See [`MAX_REQUESTS_PER_CONNECTION`].
    pub max_requests_per_connection: u64,
    /// See [`MAX_CONNECTIONS_PER_WORKER`].
    pub max_connections_per_worker: usize,
    /// See [`MAX_BUFFERED_BYTES`].
    pub max_buffered_bytes: usize,
    /// See [`H2_MAX_CONCURRENT_STREAMS`].
    pub h2_max_concurrent_streams: u32,
    /// See [`H2_MAX_HEADER_LIST_SIZE`].
    pub h2_max_header_list_size: u32,
    /// See [`H2_STREAM_WINDOW`].
    pub h2_stream_window: u32,
    /// See [`H2_CONNECTION_WINDOW`].
    pub h2_connection_window: u32,
    /// See [`H2_MAX_PENDING_ACCEPT_RESET_STREAMS`].
    pub h2_max_pending_accept_reset_streams: usize,
    /// See [`H2_MAX_LOCAL_ERROR_RESET_STREAMS`].
    pub h2_max_local_error_reset_streams: usize,
    /// See [`H2_EXTENDED_CONNECT`].
    pub h2_extended_connect: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_request_line: MAX_REQUEST_LINE,
            max_head_bytes: MAX_HEAD_BYTES,
            max_headers: MAX_HEADERS,
            max_body_bytes: MAX_BODY_BYTES,
            header_timeout: HEADER_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            body_timeout: BODY_TIMEOUT,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            max_requests_per_connection: MAX_REQUESTS_PER_CONNECTION,
            max_connections_per_worker: MAX_CONNECTIONS_PER_WORKER,
            max_buffered_bytes: MAX_BUFFERED_BYTES,
            h2_max_concurrent_streams: H2_MAX_CONCURRENT_STREAMS,
            h2_max_header_list_size: H2_MAX_HEADER_LIST_SIZE,
            h2_stream_window: H2_STREAM_WINDOW,
            h2_connection_window: H2_CONNECTION_WINDOW,
            h2_max_pending_accept_reset_streams: H2_MAX_PENDING_ACCEPT_RESET_STREAMS,
            h2_max_local_error_reset_streams: H2_MAX_LOCAL_ERROR_RESET_STREAMS,
            h2_extended_connect: H2_EXTENDED_CONNECT,
        }
    }
}
