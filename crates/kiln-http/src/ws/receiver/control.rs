//! Control frames and the close: pings answered, the peer's close answered and the
//! connection ended (RFC 6455 §5.5), and a connection failed for a protocol error or
//! a limit (§7.1.7).

use std::future::poll_fn;

use tokio::time::{Instant, timeout_at};

use super::WsReceiver;
use crate::ws::close::{self, CloseCode};
use crate::ws::frame::OpCode;
use crate::ws::sender::WriteState;

impl WsReceiver {
    pub(super) async fn on_control(&mut self, op: OpCode) {
        match op {
            OpCode::Ping if self.shared.state.get() == WriteState::Open => {
                // §5.5.2: answered with a pong carrying the same payload.
                self.shared.push_control(OpCode::Pong, &self.control);
            }
            OpCode::Close => {
                let frame = match close::parse(&self.control) {
                    Ok(frame) => frame,
                    Err((code, reason)) => {
                        // The peer has closed, if badly: answer with the error and end
                        // now, rather than wait for a second close frame.
                        self.shared.push_close(Some(code), reason);
                        return self.finish().await;
                    }
                };
                // §5.5.1: answer with a close frame, echoing the code.
                let code = frame.as_ref().map(|f| f.code);
                self.peer_close = frame;
                self.shared.push_close(code, "");
                self.finish().await;
            }
            _ => {}
        }
    }

    /// Fails the connection (RFC 6455 §7.1.7): sends the close code, ends the write
    /// side, and processes nothing the peer sends after: the frame that failed may have
    /// left the parser mid-frame, so the peer's close frame could be misread and waited
    /// for until the close timeout. What still arrives is read away, bounded, since
    /// closing with input unread would reset the connection and could destroy our
    /// close frame before the peer reads it.
    pub(super) async fn fail(&mut self, code: CloseCode, reason: &'static str) {
        if self.closing.is_none() {
            self.msg_op = None;
            self.msg = Vec::new();
            self.held.release();
            self.shared.push_close(Some(code), reason);
        }
        self.shared.shutdown().await;
        let deadline = Instant::now() + self.shared.config.close_timeout;
        loop {
            self.rbuf.clear();
            let (rbuf, shared) = (&mut self.rbuf, &*self.shared);
            let read = poll_fn(|cx| rbuf.poll_fill(&mut **shared.io.borrow_mut(), cx));
            // Boxed: a failing socket's timer need not sit in every socket's future.
            match Box::pin(timeout_at(deadline, read)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => break,
            }
        }
        self.rbuf.clear();
        self.done = true;
    }

    pub(super) fn start_closing(&mut self) {
        self.closing = Some(Instant::now() + self.shared.config.close_timeout);
        // Data frames are skipped from now on: a message half received never ends.
        self.msg_op = None;
        self.msg = Vec::new();
        self.held.release();
    }

    /// Ends the connection: what is queued goes out, then our side closes.
    pub(super) async fn finish(&mut self) {
        self.shared.shutdown().await;
        self.done = true;
    }
}
