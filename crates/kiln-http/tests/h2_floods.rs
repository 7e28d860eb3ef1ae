//! HTTP/2 floods, each written frame by frame as an attacker would: the attacker's
//! connection is closed with the code that says why (or its streams refused), within a
//! bound of bytes and time, while a well-behaved client on another connection of the
//! same worker keeps getting answers.

mod h2_support;
mod support;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use h2_support::*;
use kiln_http::Limits;
use support::TestServer;

/// Most bytes any flood sends before the server must have closed the connection.
const FLOOD_BOUND: usize = 64 * 1024 * 1024;

/// A client on its own connection and thread that asks for `/pong` again and again
/// while a flood runs; [`Bystander::finish`] says how many answers it got.
struct Bystander {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<usize>,
}

impl Bystander {
    fn start(addr: SocketAddr) -> Bystander {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let client = connect(addr).await;
                let mut answered = 0;
                while !stopped.load(Ordering::Relaxed) || answered == 0 {
                    let answer = get(&client, "/pong").await;
                    assert_eq!(answer.body_str(), "GET /pong 0", "the bystander got a wrong answer");
                    answered += 1;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                answered
            })
        });
        Bystander { stop, thread }
    }

    /// Stops it after one more answer; panics if any request failed.
    fn finish(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the well-behaved client failed during the flood")
    }
}

/// Writes `chunk` again and again (`make` gives the next one) until the server closes
/// the connection or `FLOOD_BOUND` bytes have gone; returns the bytes written. A reader
/// thread takes the server's frames meanwhile and returns the GOAWAY, if one came.
fn flood(mut s: TcpStream, mut make: impl FnMut(usize) -> Vec<u8>) -> (usize, Option<Frame>) {
    s.set_write_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    let mut reader = s.try_clone().unwrap();
    let goaway = std::thread::spawn(move || until_goaway(&mut reader));
    let mut sent = 0;
    let mut round = 0;
    while sent < FLOOD_BOUND {
        let chunk = make(round);
        round += 1;
        if s.write_all(&chunk).is_err() {
            break;
        }
        sent += chunk.len();
    }
    let goaway = goaway.join().unwrap();
    (sent, goaway)
}

fn headers(stream: u32, flags: u8, block: &[u8]) -> Vec<u8> {
    frame(HEADERS, flags, stream, block)
}

#[test]
fn rapid_reset_gets_goaway_enhance_your_calm() {
    let server = TestServer::start(Limits::default());
    let bystander = Bystander::start(server.addr());
    // Each stream asks for a handler that takes 300 ms and is reset at once.
    let block = get_block("GET", "/slow");
    let (sent, goaway) = flood(raw(server.addr()), |round| {
        (0..100u32)
            .flat_map(|i| {
                let id = (round as u32 * 100 + i) * 2 + 1;
                [headers(id, END_STREAM | END_HEADERS, &block), rst_stream(id, CANCEL)].concat()
            })
            .collect()
    });
    assert!(sent < FLOOD_BOUND, "still open after {sent} bytes");
    assert_eq!(goaway.expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    assert!(bystander.finish() > 0);
}

#[test]
fn streams_reset_one_by_one_after_they_are_accepted_get_goaway_too() {
    // Paced so that each stream is taken before its reset arrives: `h2`'s own limit on
    // reset streams waiting to be accepted does not see these, kiln's count does.
    let server = TestServer::start(Limits::default());
    let bystander = Bystander::start(server.addr());
    let block = get_block("GET", "/slow");
    let mut s = raw(server.addr());
    // Each frame in a segment of its own.
    s.set_nodelay(true).unwrap();
    let mut reader = s.try_clone().unwrap();
    let goaway = std::thread::spawn(move || until_goaway(&mut reader));
    for i in 0..1000u32 {
        let id = i * 2 + 1;
        let sent = s.write_all(&headers(id, END_STREAM | END_HEADERS, &block)).is_ok();
        std::thread::sleep(Duration::from_millis(1));
        if !sent || s.write_all(&rst_stream(id, CANCEL)).is_err() {
            break;
        }
    }
    assert_eq!(goaway.join().unwrap().expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    assert!(bystander.finish() > 0);
}

#[test]
fn continuation_without_end_headers_is_cut_off() {
    let server = TestServer::start(Limits::default());
    let bystander = Bystander::start(server.addr());
    let mut s = raw(server.addr());
    s.write_all(&headers(1, END_STREAM, &get_block("GET", "/"))).unwrap();
    // Each CONTINUATION adds fields; none ends the block.
    let mut field = vec![0x00, 5];
    field.extend_from_slice(b"x-pad");
    field.push(100);
    field.extend_from_slice(&[b'a'; 100]);
    let piece = frame(CONTINUATION, 0, 1, &field.repeat(100));
    let (sent, goaway) = flood(s, |_| piece.clone());
    assert!(sent < FLOOD_BOUND, "still open after {sent} bytes");
    assert_eq!(goaway.expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    assert!(bystander.finish() > 0);
}

#[test]
fn an_hpack_bomb_is_refused_without_decoding_it_whole() {
    let server = TestServer::start(Limits::default());
    let bystander = Bystander::start(server.addr());
    let mut s = raw(server.addr());
    // A 4,000-byte field put into the dynamic table (RFC 7541 §6.2.1) ...
    let mut block = get_block("GET", "/bomb");
    block.extend_from_slice(&[0x40, 6]);
    block.extend_from_slice(b"x-bomb");
    block.extend_from_slice(&[0x7f, 0xa1, 0x1e]); // 127 + 0x21 + (0x1e << 7) = 4000
    block.extend_from_slice(&[b'b'; 4000]);
    // ... then named 16,000 times by its index (62) in 16 KB: 64 MB once decoded.
    block.extend_from_slice(&[0xbe; 12_000]);
    s.write_all(&headers(1, END_STREAM | END_HEADERS, &block)).unwrap();
    assert_eq!(until_goaway(&mut s).expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    assert!(!server.seen.targets().contains(&"/bomb".to_owned()), "the service saw the bomb");
    assert!(bystander.finish() > 0);
}

/// Sends `chunk` again and again, each time reading the server's acknowledgements
/// (`acks` of them, SETTINGS or PING with the ACK flag) before the next, as a client
/// that reads what it is sent: until a GOAWAY (returned) or `FLOOD_BOUND` bytes.
fn paced_flood(mut s: TcpStream, chunk: &[u8], acks: usize) -> (usize, Option<Frame>) {
    let mut sent = 0;
    while sent < FLOOD_BOUND {
        if s.write_all(chunk).is_err() {
            return (sent, until_goaway(&mut s));
        }
        sent += chunk.len();
        let mut acked = 0;
        while acked < acks {
            let f = match read_frame(&mut s) {
                Some(f) => f,
                None => return (sent, None),
            };
            if f.kind == GOAWAY {
                return (sent, Some(f));
            }
            if matches!(f.kind, SETTINGS | PING) && f.flags & ACK != 0 {
                acked += 1;
            }
        }
    }
    (sent, None)
}

#[test]
fn a_settings_flood_gets_goaway_enhance_your_calm() {
    let server = TestServer::start(Limits::default());
    let bystander = Bystander::start(server.addr());
    // Large frames, each of 2,700 settings that change nothing.
    let big = settings(&[(0x1, 4096); 2700]);
    let (sent, goaway) = paced_flood(raw(server.addr()), &[big.clone(), big].concat(), 2);
    assert!(sent < FLOOD_BOUND, "still open after {sent} bytes");
    assert_eq!(goaway.expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    assert!(bystander.finish() > 0);
}

#[test]
fn a_ping_flood_gets_goaway_enhance_your_calm() {
    let server = TestServer::start(Limits::default());
    let bystander = Bystander::start(server.addr());
    let pings: Vec<u8> = (0..1000u64).flat_map(|i| frame(PING, 0, 0, &i.to_be_bytes())).collect();
    let (sent, goaway) = paced_flood(raw(server.addr()), &pings, 1000);
    assert!(sent < FLOOD_BOUND, "still open after {sent} bytes");
    assert_eq!(goaway.expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    assert!(bystander.finish() > 0);
}

#[test]
fn a_ping_flood_that_reads_nothing_stalls_and_is_closed_when_idle() {
    // The server stops reading while its answers wait to be written, so a peer that
    // never reads holds only the socket buffers; the idle timeout then ends it.
    let server = TestServer::start(Limits { idle_timeout: Duration::from_secs(2), ..Limits::default() });
    let bystander = Bystander::start(server.addr());
    let mut s = raw(server.addr());
    s.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
    let pings: Vec<u8> = (0..1000u64).flat_map(|i| frame(PING, 0, 0, &i.to_be_bytes())).collect();
    let mut sent = 0;
    while sent < FLOOD_BOUND && s.write_all(&pings).is_ok() {
        sent += pings.len();
    }
    assert!(sent < FLOOD_BOUND, "the server read {sent} bytes without being read from");
    let started = std::time::Instant::now();
    let mut sink = vec![0u8; 64 * 1024];
    loop {
        match std::io::Read::read(&mut s, &mut sink) {
            Ok(0) | Err(_) => break,
            Ok(_) => assert!(started.elapsed() < Duration::from_secs(20), "still open"),
        }
    }
    assert!(bystander.finish() > 0);
}

#[test]
fn empty_data_frames_get_goaway_enhance_your_calm() {
    let server = TestServer::start(Limits::default());
    let bystander = Bystander::start(server.addr());
    let mut s = raw(server.addr());
    s.write_all(&headers(1, END_HEADERS, &get_block("POST", "/echo"))).unwrap();
    let empties: Vec<u8> = (0..1000).flat_map(|_| frame(DATA, 0, 1, &[])).collect();
    let (sent, goaway) = flood(s, |_| empties.clone());
    assert!(sent < FLOOD_BOUND, "still open after {sent} bytes");
    assert_eq!(goaway.expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    assert!(bystander.finish() > 0);
}

#[test]
fn a_window_held_shut_resets_the_streams_then_the_connection_idles_out() {
    let limits =
        Limits { body_timeout: Duration::from_millis(500), idle_timeout: Duration::from_secs(3), ..Limits::default() };
    let server = TestServer::start(limits);
    let bystander = Bystander::start(server.addr());
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    // SETTINGS_INITIAL_WINDOW_SIZE = 0: no stream may send a byte of body.
    s.write_all(&[PREFACE, &settings(&[(0x4, 0)])].concat()).unwrap();
    for id in [1u32, 3, 5] {
        s.write_all(&headers(id, END_STREAM | END_HEADERS, &get_block("GET", "/big"))).unwrap();
    }
    let mut reset = Vec::new();
    let goaway = loop {
        let f = read_frame(&mut s).expect("a GOAWAY before the close");
        match f.kind {
            DATA => assert!(f.payload.is_empty(), "body sent through a shut window"),
            RST_STREAM => reset.push((f.stream, f.code())),
            GOAWAY => break f,
            _ => {}
        }
    };
    reset.sort();
    assert_eq!(reset, [(1, CANCEL), (3, CANCEL), (5, CANCEL)]);
    assert_eq!(goaway.code(), NO_ERROR);
    assert!(bystander.finish() > 0);
}

#[test]
fn streams_beyond_the_limit_are_refused() {
    let server = TestServer::start(Limits { h2_max_concurrent_streams: 4, ..Limits::default() });
    let bystander = Bystander::start(server.addr());
    let mut s = raw(server.addr());
    // The limit binds once the client has the server's SETTINGS (RFC 9113 §6.5.3).
    loop {
        let f = read_frame(&mut s).unwrap();
        if f.kind == SETTINGS && f.flags & ACK == 0 {
            s.write_all(&frame(SETTINGS, ACK, 0, &[])).unwrap();
            break;
        }
    }
    let opened: Vec<u8> =
        (0..10u32).flat_map(|i| headers(i * 2 + 1, END_STREAM | END_HEADERS, &get_block("GET", "/slow"))).collect();
    s.write_all(&opened).unwrap();
    let (mut answered, mut refused) = (0, 0);
    while answered + refused < 10 {
        let f = read_frame(&mut s).expect("every stream answered or refused");
        match f.kind {
            HEADERS => answered += 1,
            RST_STREAM => {
                assert_eq!(f.code(), REFUSED_STREAM, "{f:?}");
                refused += 1;
            }
            GOAWAY => panic!("the connection was closed: {f:?}"),
            _ => {}
        }
    }
    assert_eq!((answered, refused), (4, 6));
    assert!(bystander.finish() > 0);
}
