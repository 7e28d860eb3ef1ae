//! kiln's HTTP/1.1 and HTTP/2 connection engines and thread-per-core server runtime.
//!
//! - One worker thread per core, each with its own current-thread tokio runtime and
//!   `SO_REUSEPORT` listener; a service is built per worker, so it may be `!Send`.
//! - Request heads parsed in place with `httparse`, strict RFC 9112 framing: every
//!   malformed request gets a clear 4xx and the connection is closed.
//! - Pipelining: every complete request in a read is answered in order, and the
//!   responses leave in one write.
//! - Bodies by `Content-Length` or chunked, read whole (up to a limit) before the
//!   service runs, or, for the requests a service asks so ([`Service::body_mode`]),
//!   streamed: handed over as an [`IncomingBody`] read from the socket only as the
//!   handler asks, one buffer at a time, inside the connection's task, up to a
//!   per-request limit that may exceed the global one. A handler that stops early
//!   leaves a small remainder read and dropped (the connection goes on) and a large
//!   one answered with `Connection: close`. The body timeout counts time without
//!   progress (as nginx's `client_body_timeout`) and ends in a `408`. Responses from memory, from a file with `sendfile(2)`, or streamed
//!   chunked, each chunk sent as it is produced and the stream polled only while the
//!   client reads.
//! - Named, configurable [limits](Limits) and timeouts (a send timeout counts time
//!   without progress); a per-worker budget for buffered bodies and large responses,
//!   `503` beyond it; a panicking service costs one `500`.
//! - Graceful shutdown on SIGTERM and SIGINT: every request already sent is answered,
//!   with `Connection: close`, and idle connections are closed; long-lived responses
//!   end on the [`draining`] signal, and those that do not are cut after the grace.
//! - Restarts that drop nothing: on SIGUSR2 the listening sockets pass to a new process
//!   of the same executable; sockets from systemd socket activation are taken too
//!   (`docs/deploy.md`).
//! - Behind a load balancer: the PROXY protocol (v1 and v2) and forwarded headers from
//!   [trusted proxies](TrustedProxies) only, and a [`Readiness`] that turns to
//!   "draining" for a drain delay before SIGTERM stops accepting.
//! - HTTP/2 (RFC 9113) on an engine of its own: h2 by ALPN over TLS, h2c with prior knowledge
//!   on the plain port (told from HTTP/1.1 by its preface); a connection's streams are
//!   served inside its own task with the same [`Request`] and [`Response`] as HTTP/1.1;
//!   named limits (`Limits::h2_*`), a graceful `GOAWAY` on shutdown and at the request
//!   cap, and floods (rapid reset, CONTINUATION, HPACK bombs, SETTINGS, PING and empty
//!   frames) answered with `GOAWAY(ENHANCE_YOUR_CALM)`. h2spec passes every case.
//! - HTTP/1.1 upgrades ([`Response::set_upgrade`]): after the `101` the service's
//!   callback owns the connection, inside its task; and [WebSocket](ws) (RFC 6455,
//!   permessage-deflate from RFC 7692 with feature `ws-deflate`) on top.
//! - HTTPS in process (feature `tls`, rustls on ring): TLS 1.2 and 1.3, ALPN, a bounded
//!   handshake, session tickets, the certificate reloaded on SIGHUP, HSTS, and a
//!   redirecting plain-HTTP service; see `docs/tls.md` (module `tls_guide`).
//!
//! This crate knows nothing of routing or HTML; the `kiln` framework builds on it.
//!
//! ```no_run
//! use kiln_http::{service_fn, Request, Response, Server};
//!
//! fn pong(req: Request<'_>, res: &mut Response) {
//!     if req.path() == "/pong" {
//!         res.set_content_type("text/plain");
//!         res.set_body_static(b"PONG");
//!     } else {
//!         res.set_status(kiln_http::StatusCode::NOT_FOUND);
//!     }
//! }
//!
//! let server = Server::new().workers(1).serve(|_| service_fn(pong)).unwrap();
//! server.run_until_signal().unwrap();
//! ```

/// The HTTPS guide: running with TLS, renewing the certificate, the redirect, HSTS,
/// and why ring (`docs/tls.md`).
#[cfg(feature = "tls")]
#[doc = include_str!("../../../docs/tls.md")]
pub mod tls_guide {}

mod body;
mod config;
mod drain;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod gauge;
mod h1;
mod h2;
mod handover;
mod head;
mod listeners;
mod memory;
mod proxy_protocol;
mod readiness;
mod rejection;
mod request;
mod response;
mod server;
mod service;
mod signals;
mod stream;
#[cfg(feature = "tls")]
mod tls;
mod transport;
mod trusted_proxies;
mod upgrade;
mod worker;
pub mod ws;

pub use body::{BodyError, BodyMode, IncomingBody};
pub use bytes::Bytes;
pub use config::{
    BODY_TIMEOUT, DRAIN_DELAY, H2_CONNECTION_WINDOW, H2_EXTENDED_CONNECT, H2_MAX_CONCURRENT_STREAMS,
    H2_MAX_HEADER_LIST_SIZE, H2_MAX_LOCAL_ERROR_RESET_STREAMS, H2_MAX_PENDING_ACCEPT_RESET_STREAMS, H2_STREAM_WINDOW,
    HANDSHAKE_TIMEOUT, HEADER_TIMEOUT, IDLE_TIMEOUT, Limits, MAX_BODY_BYTES, MAX_BUFFERED_BYTES,
    MAX_CONNECTIONS_PER_WORKER, MAX_HEAD_BYTES, MAX_HEADERS, MAX_REQUEST_LINE, MAX_REQUESTS_PER_CONNECTION,
    SHUTDOWN_GRACE,
};
pub use drain::{Drain, draining};
pub use error::Error;
pub use gauge::{OpenConnections, open_connections};
pub use h1::chunked::{MAX_CHUNK_EXTENSIONS, MAX_TRAILER_BYTES};
pub use head::Version;
pub use http::{Method, StatusCode};
pub use memory::memory_trims;
pub use readiness::Readiness;
pub use request::{Refusal, Request, RequestBytes};
pub use response::{BodyStream, InvalidHeader, Response};
pub use server::{Server, ServerHandle};
pub use service::{Service, ServiceFn, service_fn};
#[cfg(feature = "tls")]
pub use tls::{HttpsRedirect, Tls};
pub use trusted_proxies::{InvalidCidr, TrustedProxies};
pub use upgrade::{OnUpgrade, Upgraded, UpgradedIo};
