//! A streamed body over HTTP/2 is produced only as fast as the peer's window lets it
//! leave: a stream that never ends costs a stalled reader a window's worth, not memory
//! without bound.

mod h2_support;

use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use h2_support::*;
use kiln_http::{Bytes, Request, Response, Server, Service};

const CHUNK: usize = 16 * 1024;

/// Chunks of 16 KiB for ever, counted as they are produced.
struct Endless(Arc<AtomicUsize>);

impl futures_core::Stream for Endless {
    type Item = std::io::Result<Bytes>;
    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Poll::Ready(Some(Ok(Bytes::from_static(&[b'z'; CHUNK]))))
    }
}

struct Streams(Arc<AtomicUsize>);

impl Service for Streams {
    async fn call<'a>(&'a self, _req: Request<'a>, res: &'a mut Response) {
        res.set_body_stream(Box::pin(Endless(Arc::clone(&self.0))));
    }
}

#[test]
fn an_endless_stream_is_produced_only_as_the_window_opens() {
    let produced = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&produced);
    let server = Server::new().workers(1).listen("127.0.0.1:0").serve(move |_| Streams(Arc::clone(&counter))).unwrap();
    let mut s = raw(server.local_addr());
    s.write_all(&frame(HEADERS, END_STREAM | END_HEADERS, 1, &get_block("GET", "/"))).unwrap();
    // The client's windows are the default 65,535 bytes and it reads nothing.
    std::thread::sleep(Duration::from_millis(500));
    let stalled = produced.load(Ordering::Relaxed);
    assert!(stalled * CHUNK <= 4 * 65_535, "{stalled} chunks produced for a reader that took none");
    // Opening both windows by a MiB lets more be produced, a MiB's worth or so.
    let more = (1u32 << 20).to_be_bytes();
    s.write_all(&[frame(WINDOW_UPDATE, 0, 0, &more), frame(WINDOW_UPDATE, 0, 1, &more)].concat()).unwrap();
    let mut read = 0;
    while read < (1 << 20) {
        let f = read_frame(&mut s).expect("the body flows once the window opens");
        if f.kind == DATA {
            read += f.payload.len();
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = produced.load(Ordering::Relaxed);
    assert!(after > stalled, "nothing more was produced");
    assert!(after * CHUNK <= (1 << 20) + 4 * 65_535 + 4 * CHUNK, "{after} chunks for a MiB of window");
    server.shutdown();
    drop(s);
    server.wait().unwrap();
}
