//! The service calls under way on one connection. Each can be cancelled: a stream the
//! peer resets (RST_STREAM, RFC 9113 §6.4) while its handler runs has the handler's
//! future dropped at once, as HTTP/1.1 drops it when its connection closes, instead of
//! run to an answer nobody reads. The set of calls exists only while there are calls:
//! `FuturesUnordered` keeps a stub task as large as one call, which an idle connection
//! should not carry.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use pin_project_lite::pin_project;

pin_project! {
    /// A call that [`Calls::cancel`] can drop in place.
    #[project = CallProj]
    pub(super) enum Cancellable<F> {
        Running {
            #[pin]
            call: F,
            id: u32,
            // The waker of the call's last `Pending`, so that a cancelled call is polled
            // once more and leaves the set.
            waker: Option<Waker>,
        },
        Cancelled,
    }
}

impl<F: Future> Future for Cancellable<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            CallProj::Running { call, waker, .. } => match call.poll(cx) {
                Poll::Ready(out) => Poll::Ready(Some(out)),
                Poll::Pending => {
                    match waker {
                        Some(w) if w.will_wake(cx.waker()) => {}
                        w => *w = Some(cx.waker().clone()),
                    }
                    Poll::Pending
                }
            },
            CallProj::Cancelled => Poll::Ready(None),
        }
    }
}

/// A connection's calls under way, by stream. Boxed, and freed while idle: a pointer,
/// not the set's 24 bytes, in every idle connection's future.
#[allow(clippy::box_collection)]
pub(super) struct Calls<F>(Option<Box<FuturesUnordered<Cancellable<F>>>>);

impl<F> Default for Calls<F> {
    fn default() -> Self {
        Calls(None)
    }
}

impl<F: Future> Calls<F> {
    /// Starts `call`, the answer to stream `id`.
    pub(super) fn push(&mut self, id: u32, call: F) {
        let set = self.0.get_or_insert_with(Box::default);
        set.push(Cancellable::Running { call, id, waker: None });
    }

    /// The next call that finished (cancelled ones are passed over).
    pub(super) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        let Some(set) = &mut self.0 else { return Poll::Ready(None) };
        loop {
            match set.poll_next_unpin(cx) {
                Poll::Ready(Some(None)) => continue,
                Poll::Ready(Some(Some(out))) => return Poll::Ready(Some(out)),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|set| set.is_empty())
    }

    /// Drops the call answering stream `id`, if one runs; `true` when one did.
    pub(super) fn cancel(&mut self, id: u32) -> bool {
        let Some(set) = &mut self.0 else { return false };
        for mut call in Pin::new(&mut **set).iter_pin_mut() {
            let waker = match call.as_mut().project() {
                CallProj::Running { id: running, waker, .. } if *running == id => waker.take(),
                _ => continue,
            };
            // Dropped here, in place; the set removes the entry at its next poll.
            call.set(Cancellable::Cancelled);
            if let Some(waker) = waker {
                waker.wake();
            }
            return true;
        }
        false
    }

    /// Frees the set while no call runs (the connection idles).
    pub(super) fn release_if_empty(&mut self) {
        if self.is_empty() {
            self.0 = None;
        }
    }
}
