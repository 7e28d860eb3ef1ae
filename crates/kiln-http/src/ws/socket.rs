//! A WebSocket over an upgraded connection: both halves together, or split.

use std::future::Future;
use std::rc::Rc;

use super::close::{CloseCode, CloseFrame};
use super::config::WsConfig;
use super::deflate::{DeflateParams, Deflater, Inflater};
use super::message::Message;
use super::receiver::WsReceiver;
use super::sender::{SendError, Shared, TrySendError, WsSender};
use crate::upgrade::Upgraded;

/// A server-side WebSocket (RFC 6455) on an upgraded HTTP/1.1 connection, plain or
/// TLS, or on an HTTP/2 stream (RFC 8441, the stream as its connection): frames unmasked, fragments reassembled, text checked to be UTF-8 as it
/// arrives, pings answered, a heartbeat that closes a dead peer with 1011, frame and
/// message limits (1009), permessage-deflate when negotiated, a bounded send queue
/// (see [`WsSender`] for its policy), and a close with 1001 when the server drains.
///
/// ```no_run
/// # async fn echo(mut socket: kiln_http::ws::WebSocket) {
/// while let Some(msg) = socket.recv().await {
///     if socket.send(msg).await.is_err() {
///         break;
///     }
/// }
/// # }
/// ```
pub struct WebSocket {
    tx: WsSender,
    rx: WsReceiver,
}

impl WebSocket {
    /// Speaks WebSocket on `upgraded`, after a `101` that agreed to `deflate` (or to
    /// no compression).
    pub fn new(upgraded: Upgraded, config: WsConfig, deflate: Option<DeflateParams>) -> Self {
        let (io, read_ahead) = upgraded.into_parts();
        let deflater = deflate.map(|p| Deflater::new(&p, config.compression_level));
        let inflater = deflate.map(|p| Inflater::new(&p));
        // One transport for both halves: reads and writes are each polled within one
        // call, never across an await, so they never overlap.
        let shared = Rc::new(Shared::new(io, deflater, config));
        let tx = WsSender { shared: Rc::clone(&shared) };
        let rx = WsReceiver::new(shared, &read_ahead, inflater);
        WebSocket { tx, rx }
    }

    /// The next message; see [`WsReceiver::recv`]. (The receiver's own future, not
    /// one wrapped around it: an `async fn` here would add a state machine and its
    /// drop to every message, some seventy instructions of a 20-byte echo.)
    pub fn recv(&mut self) -> impl Future<Output = Option<Message>> + '_ {
        self.rx.recv()
    }

    /// Sends a message; see [`WsSender::send`]. (The sender's own future, as for
    /// [`recv`](Self::recv).)
    pub fn send(&self, msg: impl Into<Message>) -> impl Future<Output = Result<(), SendError>> + '_ {
        self.tx.send(msg.into())
    }

    /// Queues a message without waiting; see [`WsSender::try_send`].
    pub fn try_send(&self, msg: impl Into<Message>) -> Result<(), TrySendError> {
        self.tx.try_send(msg)
    }

    /// Starts the close handshake, then reads until the peer answers (or the close
    /// timeout passes), dropping any message that still arrives.
    pub async fn close(&mut self, code: CloseCode, reason: &str) {
        if self.tx.close(code, reason).await.is_ok() {
            while self.rx.recv().await.is_some() {}
        }
    }

    /// What the peer's close frame said, once it came.
    pub fn close_frame(&self) -> Option<&CloseFrame> {
        self.rx.close_frame()
    }

    /// Splits into a sender and a receiver, to send from one task (or several: the
    /// sender clones) while another receives, all on the same worker.
    pub fn split(self) -> (WsSender, WsReceiver) {
        (self.tx, self.rx)
    }
}

impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket").field("tx", &self.tx).field("rx", &self.rx).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A masked client frame.
    fn client_frame(b0: u8, payload: &[u8]) -> Vec<u8> {
        let mask = [0xA1, 0xB2, 0xC3, 0xD4];
        assert!(payload.len() < 126);
        let mut out = vec![b0, 0x80 | payload.len() as u8];
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    /// Runs an echo socket over an in-memory pipe fed `input` (the first `early` bytes
    /// as read ahead), then the client's end closes; returns all the server wrote.
    fn run_echo(input: &[u8], early: usize, config: WsConfig) -> Vec<u8> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let (client, server) = tokio::io::duplex(64 * 1024);
            let upgraded = Upgraded::new(Box::new(server), input[..early].to_vec());
            let echo = tokio::task::spawn_local(async move {
                let mut socket = WebSocket::new(upgraded, config, None);
                while let Some(msg) = socket.recv().await {
                    if socket.send(msg).await.is_err() {
                        break;
                    }
                }
            });
            let (mut rd, mut wr) = tokio::io::split(client);
            wr.write_all(&input[early..]).await.unwrap();
            let mut out = Vec::new();
            tokio::time::timeout(Duration::from_secs(10), rd.read_to_end(&mut out)).await.unwrap().unwrap();
            drop(wr);
            echo.await.unwrap();
            out
        })
    }

    fn close_reply(code: u16) -> Vec<u8> {
        client_frame(0x88, &code.to_be_bytes())
    }

    /// The server's close frame with `code` and `reason`.
    fn server_close(code: u16, reason: &str) -> Vec<u8> {
        [&[0x88, 2 + reason.len() as u8][..], &code.to_be_bytes(), reason.as_bytes()].concat()
    }

    #[test]
    fn byte_streams_give_the_expected_answers() {
        let text = |s: &[u8]| client_frame(0x81, s);
        let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
            ("echo then close", [text(b"hi"), close_reply(1000)].concat(), b"\x81\x02hi\x88\x02\x03\xE8".to_vec()),
            (
                "ping answered between fragments",
                [client_frame(0x01, b"a"), client_frame(0x89, b"p"), client_frame(0x80, b"b"), close_reply(1000)]
                    .concat(),
                b"\x8A\x01p\x81\x02ab\x88\x02\x03\xE8".to_vec(),
            ),
            ("an empty close is answered empty", client_frame(0x88, b""), b"\x88\x00".to_vec()),
            ("a pong is ignored", [client_frame(0x8A, b"x"), close_reply(1000)].concat(), b"\x88\x02\x03\xE8".to_vec()),
            (
                "a new message inside a fragmented one",
                [client_frame(0x01, b"a"), text(b"b"), close_reply(1002)].concat(),
                server_close(1002, "expected a continuation"),
            ),
            (
                "RSV1 without deflate",
                [client_frame(0xC1, b"a"), close_reply(1002)].concat(),
                server_close(1002, "reserved bit set"),
            ),
        ];
        for (name, input, want) in cases {
            for early in [0, input.len() / 2] {
                assert_eq!(run_echo(&input, early, WsConfig::default()), want, "{name}, {early} bytes read ahead");
            }
        }
    }

    #[test]
    fn a_frame_over_the_limit_is_refused_before_its_payload() {
        let config = WsConfig { max_frame: 8, ..WsConfig::default() };
        let input = [client_frame(0x82, &[0u8; 9]), close_reply(1009)].concat();
        assert_eq!(run_echo(&input, 0, config), server_close(1009, "frame too large"));
    }

    /// Regression guard for issue 23's idle memory: what every open socket keeps
    /// (the receiver inline in the app's future, the shared half behind an `Rc`)
    /// stays small; compression state, timers that run rarely and the read buffer
    /// live elsewhere, allocated only when used.
    #[test]
    fn an_idle_sockets_state_stays_small() {
        assert!(std::mem::size_of::<WebSocket>() <= 320, "{}", std::mem::size_of::<WebSocket>());
        assert!(std::mem::size_of::<crate::ws::sender::Shared>() <= 256);
    }
}
