//! The builder's bind errors and the size of a connection's start-up task.

use std::net::SocketAddr;
use std::rc::Rc;

use super::Server;
use super::start::{Startup, start};
use crate::service_fn;
use crate::worker::Worker;

#[tokio::test]
async fn a_connection_s_task_stays_small() {
    // Every connection's task holds `start`'s future for its whole life, beside
    // the boxed HTTP/1.1 or HTTP/2 future: a local or argument kept across the
    // wait costs every idle connection its bytes.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let worker = Rc::new(Worker::new(crate::config::Limits::default()));
    let nothing = |_: crate::Request<'_>, _: &mut crate::Response| {};
    let startup = Rc::new(Startup {
        proxy: None,
        #[cfg(feature = "tls")]
        tls: None,
    });
    let task = start(stream, addr, Rc::new(service_fn(nothing)), worker, startup, 0);
    let size = std::mem::size_of_val(&task);
    eprintln!("start: {size} bytes");
    assert!(size <= START_BOUND, "start's future grew to {size} bytes");
}

/// 224 bytes as an `async fn` (its arguments kept twice, the PROXY client beside
/// the peer); 120 now.
const START_BOUND: usize = 160;

#[test]
fn listen_takes_a_string_and_an_address_that_resolves_to_nothing_is_a_bind_error() {
    let nothing = |_: crate::Request<'_>, _: &mut crate::Response| {};
    let server = Server::new().workers(1).listen("127.0.0.1:0").serve(move |_| service_fn(nothing)).unwrap();
    assert!(server.local_addr().ip().is_loopback());
    server.shutdown();
    server.wait().unwrap();
    let none: &[SocketAddr] = &[];
    for bad in [Server::new().listen(none), Server::new().listen("127.0.0.1:99999")] {
        let err = bad.serve(move |_| service_fn(nothing)).unwrap_err();
        assert!(err.is_bind(), "{err}");
    }
}

#[test]
fn a_second_server_on_a_port_in_use_is_refused_and_a_port_left_in_time_wait_is_not() {
    // Bug: with `SO_REUSEPORT` a second kiln (a forgotten one, of the same user) bound
    // beside the first, and the kernel split the connections between them silently.
    use std::io::{Read, Write};
    let pong = |_: crate::Request<'_>, res: &mut crate::Response| res.set_body_static(b"pong");
    let first = Server::new().workers(2).listen("127.0.0.1:0").serve(move |_| service_fn(pong)).unwrap();
    let addr = first.local_addr();
    let err = Server::new().workers(1).listen(addr).serve(move |_| service_fn(pong)).unwrap_err();
    assert!(err.is_bind(), "{err}");
    assert!(err.to_string().contains("already in use"), "{err}");

    // The first one still has the port, and closes a connection it served on shutdown:
    // the server's side of it lingers in TIME_WAIT, which must not keep the port taken.
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut answer = [0u8; 512];
    let n = client.read(&mut answer).unwrap();
    assert!(answer[..n].ends_with(b"pong"), "{}", String::from_utf8_lossy(&answer[..n]));
    first.shutdown();
    first.wait().unwrap();
    drop(client);
    let again = Server::new().workers(1).listen(addr).serve(move |_| service_fn(pong)).unwrap();
    assert_eq!(again.local_addr(), addr);
    again.shutdown();
    again.wait().unwrap();
}
