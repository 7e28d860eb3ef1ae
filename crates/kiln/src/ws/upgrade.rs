//! [`WebSocketUpgrade`]: the extractor that accepts a WebSocket handshake, and the
//! `101` response that hands the connection to the application's socket loop.

use std::future::Future;
use std::time::Duration;

use kiln_http::ws::{DeflateConfig, WebSocket, WsConfig, negotiate_deflate};
use kiln_http::{Response, StatusCode};

use super::handshake::{self, Handshake};
use crate::extract::{FromRequest, RequestContext};
use crate::rejection::Rejection;
use crate::response::IntoResponse;

/// A valid WebSocket handshake (RFC 6455 §4.2.1), to be answered with
/// [`on_upgrade`](Self::on_upgrade). Put it beside a typed route, so links to the
/// socket are checked like any other:
///
/// ```
/// use kiln::ws::{Message, WebSocketUpgrade};
/// use kiln::{App, Route};
///
/// #[derive(Route)]
/// #[route(GET, "/ws/echo")]
/// struct Echo;
///
/// async fn echo(_: Echo, ws: WebSocketUpgrade) -> impl kiln::IntoResponse {
///     ws.on_upgrade(|mut socket| async move {
///         while let Some(msg) = socket.recv().await {
///             if socket.send(msg).await.is_err() {
///                 break;
///             }
///         }
///     })
/// }
///
/// let app = App::new(|_| ()).route(echo);
/// # let _ = app;
/// ```
///
/// **One route, both protocols.** The same route answers an HTTP/1.1 upgrade (`GET`,
/// `101 Switching Protocols`) and an HTTP/2 extended CONNECT (RFC 8441: `:protocol:
/// websocket`, answered `200`), and the socket behaves the same on either. A browser
/// whose page came over HTTP/2 opens its WebSockets as streams of that connection
/// instead of new HTTP/1.1 connections, when the server offers it: an app with at least
/// one WebSocket route offers it on every HTTP/2 connection (the
/// `SETTINGS_ENABLE_CONNECT_PROTOCOL` setting); a server started with
/// [`Limits::h2_extended_connect`](kiln_http::Limits::h2_extended_connect) `false` does
/// not, and browsers then upgrade over HTTP/1.1. Over HTTP/2 the socket's bytes travel in
/// the stream's DATA frames under its flow control: what the peer sends is taken only as
/// the socket reads it, and what the socket sends leaves only as the peer's window
/// allows (a client that reads nothing fills the send queue, then `send` waits). A
/// reset stream, or the connection's end, ends the socket: `recv` returns `None`. An
/// extended CONNECT for another protocol, or to a route that takes no WebSocket, is
/// refused with `405`.
///
/// A request that is no handshake is refused with
/// [`InvalidWebSocketHandshake`](crate::rejection::InvalidWebSocketHandshake) (400);
/// one for a version other than 13 with
/// [`UnsupportedWebSocketVersion`](crate::rejection::UnsupportedWebSocketVersion) (426,
/// `Sec-WebSocket-Version: 13`).
///
/// What it chooses, against what users of other frameworks' sockets ran into (their
/// issue trackers: dead peers found only when a write fails, as in ASP.NET's
/// aspnet/WebSockets#74 and Cowboy apps that add their own pings; actix-web#1967, "Websocket
/// client uses an unbounded buffer"; warp#545, graceful shutdown that cuts open
/// sockets without a close frame):
/// - **A heartbeat by default** (a ping after 30 s of silence, 1011 after 30 s more):
///   a peer that vanished without a FIN does not hold its socket forever. Any byte
///   from the peer counts as alive, so a busy socket is never pinged.
/// - **A bounded send queue** (1 MiB): `send` waits when it is full, `try_send` hands
///   the message back, and a peer that takes no byte for 30 s is dropped; memory per
///   socket never grows with a slow reader, and a peer that floods pings without
///   reading the pongs is not read from while the queue is full.
/// - **Limits** on frames and messages (1 MiB, [`max_message`](Self::max_message)),
///   the message counted after decompression as it inflates, so a small deflate bomb
///   is stopped at the limit; and one budget for the messages all of a worker's
///   sockets are receiving (64 MiB, `WsConfig::worker_message_bytes`), so that many
///   clients each sending a large message cannot add up: the socket over it gets 1009.
/// - **Shutdown reaches sockets**: on drain each one is closed with 1001 and given
///   5 s for the client's close frame; until it ends it counts as an open connection,
///   so the server waits for it (within the grace period).
/// - **permessage-deflate is on** when the client offers it and kiln's `ws-deflate`
///   feature is (off with [`deflate`](Self::deflate)), with context takeover and
///   window bits negotiated.
///
/// The socket's protocol work (pongs, the heartbeat, the close handshake, drain) runs
/// while [`recv`](kiln_http::ws::WsReceiver::recv) is awaited: keep one task
/// receiving, even when the app only sends.
#[derive(Debug)]
pub struct WebSocketUpgrade {
    handshake: Handshake,
    config: WsConfig,
    deflate: Option<DeflateConfig>,
    protocols: Vec<String>,
}

impl<S> FromRequest<S> for WebSocketUpgrade {
    const WEBSOCKET: bool = true;

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let handshake = handshake::check(&cx.request())?;
        Ok(WebSocketUpgrade {
            handshake,
            config: WsConfig::default(),
            deflate: Some(DeflateConfig::default()),
            protocols: Vec::new(),
        })
    }
}

impl WebSocketUpgrade {
    /// Replaces every limit and timer at once.
    pub fn config(mut self, config: WsConfig) -> Self {
        self.config = config;
        self
    }

    /// Largest message, after decompression (1009 beyond).
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.config.max_message = bytes;
        self
    }

    /// Largest frame (1009 beyond).
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.config.max_frame = bytes;
        self
    }

    /// Bytes queued for sending before `send` waits and `try_send` refuses.
    pub fn max_queue(mut self, bytes: usize) -> Self {
        self.config.max_queue = bytes;
        self
    }

    /// Ping after this long without a byte from the peer; close with 1011 after as
    /// long again. `None`: no heartbeat.
    pub fn heartbeat(mut self, every: Option<Duration>) -> Self {
        self.config.heartbeat = every;
        self
    }

    /// permessage-deflate settings, or `None` to never compress.
    pub fn deflate(mut self, deflate: Option<DeflateConfig>) -> Self {
        self.deflate = deflate;
        self
    }

    /// Subprotocols the app speaks, by preference; the first the client also offers is
    /// answered in `Sec-WebSocket-Protocol`. None in common: none is answered, and
    /// the client decides whether to go on.
    pub fn protocols<I: IntoIterator<Item = P>, P: Into<String>>(mut self, protocols: I) -> Self {
        self.protocols = protocols.into_iter().map(Into::into).collect();
        self
    }

    /// The subprotocols the client offered, in its order.
    pub fn offered_protocols(&self) -> &[String] {
        &self.handshake.protocols
    }

    /// Answers `101 Switching Protocols` (over HTTP/2, `200`); once it is sent,
    /// `callback` runs with the socket, inside the connection's task, until it returns.
    pub fn on_upgrade<F, Fut>(self, callback: F) -> WebSocketResponse
    where
        F: FnOnce(WebSocket) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let deflate = self.deflate.and_then(|c| negotiate_deflate([self.handshake.extensions.as_str()], &c));
        let protocol = self.protocols.into_iter().find(|p| self.handshake.protocols.contains(p));
        let config = self.config;
        let params = deflate.as_ref().map(|(p, _)| *p);
        // The socket is made before the app's future, which alone is boxed: no wrapper
        // future keeps the settings and the transport's parts for the socket's life.
        let start: kiln_http::OnUpgrade =
            Box::new(move |upgraded| Box::pin(callback(WebSocket::new(upgraded, config, params))));
        WebSocketResponse { accept: self.handshake.accept, extension: deflate.map(|(_, line)| line), protocol, start }
    }
}

/// The `101` answer to a handshake; see [`WebSocketUpgrade::on_upgrade`].
pub struct WebSocketResponse {
    accept: Option<String>,
    extension: Option<String>,
    protocol: Option<String>,
    start: kiln_http::OnUpgrade,
}

impl IntoResponse for WebSocketResponse {
    fn into_response(self, res: &mut Response) {
        match &self.accept {
            Some(accept) => {
                res.set_status(StatusCode::SWITCHING_PROTOCOLS);
                res.append_header_unchecked(b"Upgrade", b"websocket");
                res.append_header_unchecked(b"Connection", b"Upgrade");
                res.append_header_unchecked(b"Sec-WebSocket-Accept", accept.as_bytes());
            }
            // RFC 8441 §5: over HTTP/2 the tunnel opens with a `200`, without a length.
            None => res.set_status(StatusCode::OK),
        }
        if let Some(line) = &self.extension {
            res.append_header_unchecked(b"Sec-WebSocket-Extensions", line.as_bytes());
        }
        if let Some(protocol) = &self.protocol {
            // Offered by the client and named by the app: a token either way.
            let _ = res.insert_header("Sec-WebSocket-Protocol", protocol.as_bytes());
        }
        res.set_upgrade(self.start);
    }
}

impl std::fmt::Debug for WebSocketResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketResponse")
            .field("extension", &self.extension)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}
