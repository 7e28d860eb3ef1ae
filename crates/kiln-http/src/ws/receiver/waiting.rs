//! Waiting for input: while something is queued to write or a close is under way,
//! and the timers that may end the wait (the heartbeat, the drain signal, the close
//! timeout).

use std::future::{Future, pending, poll_fn};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll};

use tokio::time::{Instant, sleep_until};

use super::{Wake, WsReceiver};
use crate::ws::close::CloseCode;
use crate::ws::frame::OpCode;
use crate::ws::sender::WriteState;

impl WsReceiver {
    /// Waits for input, the heartbeat, drain or the close timeout, writing what is
    /// queued meanwhile. Polled by hand rather than through `select!`, which would
    /// build every branch's future (timers included) on each call: this runs once per
    /// message received.
    pub(super) async fn wait(&mut self) {
        let wake = self.wake().await;
        self.on_wake(wake).await;
    }

    /// Acts on what ended a wait.
    pub(super) async fn on_wake(&mut self, wake: Wake) {
        match wake {
            Wake::Read(0) | Wake::ReadError | Wake::CloseTimeout => self.finish().await,
            Wake::Read(_) => self.heard = true,
            Wake::Wrote => {}
            Wake::Heartbeat => self.beat().await,
            Wake::Drain => {
                // Shutdown began: close with 1001 and let the peer answer.
                self.shared.push_close(Some(CloseCode::GOING_AWAY), "server shutting down");
                self.start_closing();
            }
        }
    }

    /// What ends the wait; see [`wait`](Self::wait).
    pub(super) async fn wake(&mut self) -> Wake {
        // A clone, so that the flush may borrow it while `self` is polled.
        let shared = Rc::clone(&self.shared);
        let queued = shared.queued() > 0;
        // A peer that does not read what we queue is not read from either, past the
        // bound: its pings cannot grow our queue without end.
        let can_read = shared.queued() <= shared.config.max_queue;
        // Neither future does anything until polled, and each is polled only when wanted.
        let mut flushing = pin!(async { if queued { shared.flush().await } else { pending().await } });
        // Boxed, and only once closing: a timer inline would sit in every idle socket.
        let mut close_timer = self.closing.map(|at| Box::pin(sleep_until(at)));
        poll_fn(|cx| {
            if can_read {
                if let Poll::Ready(wake) = self.poll_read(cx) {
                    return Poll::Ready(wake);
                }
            }
            if queued {
                match flushing.as_mut().poll(cx) {
                    Poll::Ready(Ok(())) => return Poll::Ready(Wake::Wrote),
                    Poll::Ready(Err(_)) => return Poll::Ready(Wake::ReadError),
                    Poll::Pending => {}
                }
            }
            if let Some(timer) = close_timer.as_mut() {
                if timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Wake::CloseTimeout);
                }
            }
            self.poll_timers(cx, close_timer.is_none())
        })
        .await
    }

    /// Reads what the transport has.
    pub(super) fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Wake> {
        match self.rbuf.poll_fill(&mut **self.shared.io.borrow_mut(), cx) {
            Poll::Ready(Ok(n)) => Poll::Ready(Wake::Read(n)),
            Poll::Ready(Err(_)) => Poll::Ready(Wake::ReadError),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The heartbeat, and the drain signal when `drain` (not once closing): each
    /// polled only when it fired or the task's waker is not the one they hold.
    pub(super) fn poll_timers(&mut self, cx: &mut Context<'_>, drain: bool) -> Poll<Wake> {
        let registered = self.registered.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if let Some(timer) = self.heartbeat.as_mut() {
            if (!registered || timer.is_elapsed()) && timer.as_mut().poll(cx).is_ready() {
                self.registered = None;
                return Poll::Ready(Wake::Heartbeat);
            }
        }
        if drain && (!registered || self.drain.is_draining()) && Pin::new(&mut self.drain).poll(cx).is_ready() {
            return Poll::Ready(Wake::Drain);
        }
        if !registered {
            self.registered = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// The heartbeat's timer fired: all is well if the peer was heard since the last
    /// beat; else ping it, and if it was pinged already, close with 1011.
    pub(super) async fn beat(&mut self) {
        let Some(every) = self.shared.config.heartbeat else { return };
        if let Some(timer) = &mut self.heartbeat {
            timer.as_mut().reset(Instant::now() + every);
            // Reset: polled again, to register afresh.
            self.registered = None;
        }
        if std::mem::take(&mut self.heard) {
            self.pinged = false;
        } else if !self.pinged && self.shared.state.get() == WriteState::Open {
            self.pinged = true;
            self.shared.push_control(OpCode::Ping, b"");
        } else {
            self.shared.push_close(Some(CloseCode::INTERNAL_ERROR), "no answer to heartbeat");
            self.finish().await;
        }
    }
}
