//! [`TestWebSocket`]: the client's end of a WebSocket whose server end is the app's
//! handler, joined in process by a pipe: frames as RFC 6455 §5 has them, masked
//! from the client as §5.3 requires.

use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use kiln_http::{OnUpgrade, Upgraded};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::{Driver, TestResponse, TimedOut};
use crate::ws::{CloseCode, CloseFrame, Message};

/// Bytes the pipe between the test and the socket holds each way; a side that writes
/// more waits for the other to read.
const PIPE_BYTES: usize = 1 << 20;
/// How long a write may wait for the app to read before the test calls it a hang.
const WRITE_GUARD: Duration = Duration::from_secs(30);

/// RFC 6455 §5.2 opcodes.
const CONTINUATION: u8 = 0x0;
const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// A WebSocket opened by [`TestRequest::websocket`](super::TestRequest::websocket):
/// the app's handler runs its end as on a server, in the client's task set, while
/// the test sends other requests. Pings are answered and pongs consumed, as a
/// browser does; the close handshake ends [`recv`](Self::recv).
pub struct TestWebSocket {
    /// The test's end of the pipe; the handler's socket holds the other.
    io: DuplexStream,
    /// Read and not yet parsed into frames.
    read: Vec<u8>,
    /// The opcode and payload of a message whose fragments are still coming.
    partial: Option<(u8, Vec<u8>)>,
    /// What the server's close frame said, once it came (`None` inside: no code).
    closed: Option<Option<CloseFrame>>,
    /// Whether the test's close frame went out.
    close_sent: bool,
    /// Varied per frame, so that masking is exercised as a browser's would be.
    mask: u32,
    head: TestResponse,
    driver: Rc<Driver>,
}

impl TestWebSocket {
    /// Runs `on_upgrade` on one end of a pipe, in the client's task set; the test
    /// keeps the other.
    pub(super) fn start(driver: Rc<Driver>, head: TestResponse, on_upgrade: OnUpgrade) -> Self {
        let (io, app) = tokio::io::duplex(PIPE_BYTES);
        // Its own task, as in the connection's on a server: a panic ends only it,
        // and the test reads the end of the socket.
        // The socket is made inside the task, in the runtime: its timers need one.
        drop(driver.spawn(async move { on_upgrade(Upgraded::new(Box::new(app), Vec::new())).await }));
        TestWebSocket {
            io,
            read: Vec::new(),
            partial: None,
            closed: None,
            close_sent: false,
            mask: 0x3779_b1e5,
            head,
            driver,
        }
    }

    /// The `101` answer's headers (case-insensitive): the subprotocol chosen, say.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.header(name)
    }

    /// Sends a message: text from a `&str` or `String`, binary from a `Vec<u8>`.
    /// Panics if the socket has ended.
    pub fn send(&mut self, message: impl Into<Message>) {
        match message.into() {
            Message::Text(text) => self.write_frame(TEXT, text.as_bytes()),
            Message::Binary(bytes) => self.write_frame(BINARY, &bytes),
        }
    }

    /// The next message, waiting at most `timeout` for it; `Ok(None)` once the socket
    /// has ended: the server's close frame came (answered, and kept in
    /// [`close_frame`](Self::close_frame)), or it went away without one.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Message>, TimedOut> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.closed.is_some() {
                return Ok(None);
            }
            if let Some((fin, opcode, payload)) = self.next_frame() {
                if let Some(message) = self.take(fin, opcode, payload) {
                    return Ok(Some(message));
                }
                continue;
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let (io, read) = (&mut self.io, &mut self.read);
            match self.driver.within(left, io.read_buf(read)).map_err(|_| TimedOut(timeout))? {
                Ok(0) | Err(_) => self.closed = Some(None),
                Ok(_) => {}
            }
        }
    }

    /// Starts the close handshake with `code` and `reason` (RFC 6455 §7.1.2), then
    /// reads until the server answers, dropping any message that still comes; returns
    /// what its close frame said (`None`: no code, or no frame before it went away).
    pub fn close(&mut self, code: CloseCode, reason: &str, timeout: Duration) -> Result<Option<CloseFrame>, TimedOut> {
        if !self.close_sent && self.closed.is_none() {
            let mut payload = code.0.to_be_bytes().to_vec();
            payload.extend_from_slice(reason.as_bytes());
            self.write_frame(CLOSE, &payload);
            self.close_sent = true;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        while self.recv(deadline.saturating_duration_since(tokio::time::Instant::now()))?.is_some() {}
        Ok(self.close_frame().cloned())
    }

    /// What the server's close frame said, once it came.
    pub fn close_frame(&self) -> Option<&CloseFrame> {
        self.closed.as_ref()?.as_ref()
    }

    /// A frame's meaning: a whole message, or `None` for a fragment, a control
    /// frame (answered), or the close.
    fn take(&mut self, fin: bool, opcode: u8, payload: Vec<u8>) -> Option<Message> {
        let (opcode, payload) = match opcode {
            PING => {
                self.write_frame(PONG, &payload);
                return None;
            }
            PONG => return None,
            CLOSE => {
                let frame = match payload.as_slice() {
                    [hi, lo, reason @ ..] => Some(CloseFrame {
                        code: CloseCode(u16::from_be_bytes([*hi, *lo])),
                        reason: String::from_utf8(reason.to_vec()).expect("the server's close reason is UTF-8"),
                    }),
                    _ => None,
                };
                // §5.5.1: the close is answered, with the code it carried.
                if !std::mem::replace(&mut self.close_sent, true) {
                    let echo = frame.as_ref().map(|f| f.code.0.to_be_bytes().to_vec()).unwrap_or_default();
                    let _ = self.try_write_frame(CLOSE, &echo);
                }
                self.closed = Some(frame);
                return None;
            }
            CONTINUATION => {
                let (first, mut so_far) = self.partial.take().expect("a continuation follows a message's first frame");
                so_far.extend_from_slice(&payload);
                (first, so_far)
            }
            TEXT | BINARY => {
                assert!(self.partial.is_none(), "a new message began before the last one ended");
                (opcode, payload)
            }
            other => panic!("the server sent a frame of unknown opcode {other:#x}"),
        };
        if !fin {
            self.partial = Some((opcode, payload));
            return None;
        }
        Some(match opcode {
            TEXT => Message::Text(String::from_utf8(payload).expect("the server's text message is UTF-8")),
            _ => Message::Binary(payload),
        })
    }

    /// The first whole frame read (§5.2), taken out of `read`: FIN, opcode, payload.
    fn next_frame(&mut self) -> Option<(bool, u8, Vec<u8>)> {
        let buf = &self.read;
        let (first, second) = (*buf.first()?, *buf.get(1)?);
        assert_eq!(first & 0x70, 0, "the server set RSV bits, with no extension agreed");
        let (len, mut at) = match second & 0x7F {
            126 => (u64::from(u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?)), 4),
            127 => (u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?), 10),
            n => (u64::from(n), 2),
        };
        assert_eq!(second & 0x80, 0, "a server must not mask its frames (RFC 6455 §5.1)");
        let len = usize::try_from(len).expect("a frame that fits in memory");
        let payload = buf.get(at..at + len)?.to_vec();
        at += len;
        self.read.drain(..at);
        Some((first & 0x80 != 0, first & 0x0F, payload))
    }

    /// Writes one whole, masked frame; panics if the socket has ended.
    fn write_frame(&mut self, opcode: u8, payload: &[u8]) {
        if let Err(e) = self.try_write_frame(opcode, payload) {
            panic!("cannot send on the WebSocket: {e}");
        }
    }

    fn try_write_frame(&mut self, opcode: u8, payload: &[u8]) -> std::io::Result<()> {
        self.mask = self.mask.rotate_left(7).wrapping_mul(0x9E37_79B9) | 1;
        let mask = self.mask.to_be_bytes();
        let mut frame = vec![0x80 | opcode];
        match payload.len() {
            n @ 0..=125 => frame.push(0x80 | n as u8),
            n @ 126..=0xFFFF => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        let io = &mut self.io;
        match self.driver.within(WRITE_GUARD, io.write_all(&frame)) {
            Ok(written) => written,
            Err(TimedOut(waited)) => panic!("the app read nothing from the WebSocket for {waited:?}"),
        }
    }
}

impl fmt::Debug for TestWebSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestWebSocket").field("closed", &self.closed).finish_non_exhaustive()
    }
}
