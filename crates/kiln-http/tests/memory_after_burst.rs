//! Memory given back after a burst (issue 33, item 11): when a burst of connections
//! has closed, the worker trims the allocator's heaps once; while they are open, and
//! under steady load, it does not. Observed through `memory_trims`, not the resident
//! set, which depends on the machine.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread::sleep;
use std::time::{Duration, Instant};

use kiln_http::{Server, memory_trims, service_fn};

/// Comfortably above the burst a worker must have shed for its end to count.
const BURST: usize = 100;

#[test]
fn a_worker_gives_memory_back_once_a_burst_of_connections_has_closed() {
    let server = Server::new()
        .workers(1)
        .listen("127.0.0.1:0")
        .serve(|_| service_fn(|_req, res| res.set_body_static(b"pong")))
        .unwrap();
    let before = memory_trims();
    let mut burst = Vec::new();
    for _ in 0..BURST {
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // Answered, so the worker has it; then half a head, so it holds buffers.
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        let mut answer = [0u8; 256];
        let n = s.read(&mut answer).unwrap();
        assert!(answer[..n].ends_with(b"pong"));
        s.write_all(b"GET / HTTP/1.1\r\nHost:").unwrap();
        burst.push(s);
    }
    // Held for more than two of the worker's ticks: no trim while the burst lasts.
    sleep(Duration::from_millis(2_500));
    assert_eq!(memory_trims(), before, "trimmed while the burst's connections were open");
    drop(burst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while memory_trims() == before && Instant::now() < deadline {
        sleep(Duration::from_millis(50));
    }
    assert_eq!(memory_trims(), before + 1, "no trim after the burst closed");
    // Once per burst: a quiet server does not trim again.
    sleep(Duration::from_millis(2_500));
    assert_eq!(memory_trims(), before + 1, "trimmed again with no new burst");
    server.shutdown();
    server.wait().unwrap();
}
