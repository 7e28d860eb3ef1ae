//! TLS must not cost plain HTTP: the connection loop is generic over its transport, and
//! a plain keep-alive `/pong` still allocates nothing per request once warm.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kiln_http::{Server, service_fn};

/// Counts every allocation in the process (the server's worker and this client).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: defers every call to the system allocator unchanged; it only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` above with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const PONG: &[u8] = b"GET /pong HTTP/1.1\r\nHost: a\r\n\r\n";

/// Sends `n` requests one after the other on `tcp`, reading each answer whole.
fn round_trips(tcp: &mut std::net::TcpStream, n: usize, buf: &mut [u8]) {
    for _ in 0..n {
        tcp.write_all(PONG).unwrap();
        let mut got = 0;
        // Every answer is the same length; read until its body.
        while got == 0 || !buf[..got].ends_with(b"PONG") {
            let read = tcp.read(&mut buf[got..]).unwrap();
            assert!(read > 0, "closed");
            got += read;
        }
    }
}

#[test]
fn plain_keep_alive_pong_allocates_nothing_per_request() {
    let pong = |_: kiln_http::Request<'_>, res: &mut kiln_http::Response| res.set_body_static(b"PONG");
    let server = Server::new().listen("127.0.0.1:0").workers(1).serve(move |_| service_fn(pong)).unwrap();
    let mut tcp = std::net::TcpStream::connect(server.local_addr()).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = vec![0u8; 4096];
    round_trips(&mut tcp, 200, &mut buf);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    round_trips(&mut tcp, 2000, &mut buf);
    let per_request = (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / 2000.0;
    // Not exactly 0: the once-a-second `Date` tick allocates its string.
    assert!(per_request < 0.05, "{per_request} allocations per plain /pong");
    server.shutdown();
    server.wait().unwrap();
}
