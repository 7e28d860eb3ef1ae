//! The driver task of a connection: it writes what the calls queued (two batches out at
//! most) and reads what the server answers, until the connection breaks or its
//! [`PgConn`](super::PgConn) is dropped; then every call still waiting fails.

use std::cell::RefCell;
use std::future::poll_fn;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::dispatch::dispatch;
use super::{Expect, READ_CHUNK, Shared, push_sync};
use crate::error::Error;
use crate::postgres::stream::Stream;

/// Runs the connection until it breaks or the [`PgConn`] is dropped, then fails
/// every call still waiting.
pub(super) async fn drive(shared: Rc<RefCell<Shared>>, mut stream: Stream, mut input: BytesMut) {
    let mut scratch = vec![0; READ_CHUNK].into_boxed_slice();
    let mut dispatched = dispatch(&shared, &mut input);
    if dispatched.is_ok() {
        dispatched = poll_fn(|cx| poll_drive(&shared, &mut stream, &mut input, &mut scratch, cx)).await;
    }
    let why = dispatched.err().unwrap_or_else(|| "closed".to_owned());
    let mut shared = shared.borrow_mut();
    shared.closed = Some(why.clone());
    let lost = || Error::Unavailable(format!("lost the connection to PostgreSQL: {why}"));
    let unsynced = std::mem::take(&mut shared.unsynced);
    for expect in shared.expected.drain(..) {
        if let Expect::Sync(calls) = expect {
            calls.iter().for_each(|call| {
                call.fail(lost());
                call.finish();
            });
        }
    }
    for call in unsynced {
        call.fail(lost());
        call.finish();
    }
}

/// Writes what is queued, then reads and dispatches what has arrived, until both
/// would block. Ends (`Ready`) only when the connection is gone, saying why.
fn poll_drive(
    shared: &RefCell<Shared>,
    stream: &mut Stream,
    input: &mut BytesMut,
    scratch: &mut [u8],
    cx: &mut Context<'_>,
) -> Poll<Result<(), String>> {
    loop {
        {
            let mut s = shared.borrow_mut();
            if !s.driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                s.driver = Some(cx.waker().clone());
            }
            // Two batches out at most: while the server works on what was sent, this
            // thread's new queries gather, and go together once it has answered the
            // older batch. Each `Sync` costs the server a commit and a flush, and each
            // write a wake-up; under load the batches grow by themselves, and a lone
            // query still goes at once.
            if s.syncs.may_send() || s.syncs.writing {
                if !s.unsynced.is_empty() {
                    let Shared { out, expected, unsynced, syncs, .. } = &mut *s;
                    push_sync(out, expected, syncs, std::mem::take(unsynced));
                }
                let mut wrote = false;
                while !s.out.is_empty() {
                    match Pin::new(&mut *stream).poll_write(cx, &s.out) {
                        Poll::Ready(Ok(0)) => return Poll::Ready(Err("the socket takes no more bytes".into())),
                        Poll::Ready(Ok(n)) => {
                            s.out.advance(n);
                            wrote = true;
                        }
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e.to_string())),
                        Poll::Pending => break,
                    }
                }
                s.syncs.writing = !s.out.is_empty();
                if s.out.is_empty() {
                    s.syncs.unsent = 0;
                }
                // TLS holds written bytes back in records until flushed.
                if wrote && let Poll::Ready(Err(e)) = Pin::new(&mut *stream).poll_flush(cx) {
                    return Poll::Ready(Err(e.to_string()));
                }
            }
        }
        let mut buf = ReadBuf::new(scratch);
        match Pin::new(&mut *stream).poll_read(cx, &mut buf) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e.to_string())),
            Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                return Poll::Ready(Err("the server closed the connection".into()));
            }
            Poll::Ready(Ok(())) => {
                input.extend_from_slice(buf.filled());
                if let Err(why) = dispatch(shared, input) {
                    return Poll::Ready(Err(why));
                }
            }
        }
    }
}
