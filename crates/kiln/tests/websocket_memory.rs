//! Issue 33 item 10, WebSocket memory has no overall bound: the messages a worker's
//! sockets are receiving share one budget (a socket over it gets 1009 and a bystander
//! goes on), and a message of N bytes costs about N while it is received. Memory is
//! counted by this binary's own allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use flate2::{Compress, Compression, FlushCompress};
use kiln::http::Server;
use kiln::ws::{DeflateConfig, Message, WebSocketUpgrade, WsConfig};
use kiln::{App, IntoResponse, Route};

/// Bytes live on the heap, and the most there were since [`mark`].
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

struct Counting;

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; only counters are added.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted at its largest: the old block and the new one may both exist while
        // the bytes are copied.
        grew(new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator with `layout`, as the caller promises.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests measure the one process's heap: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[derive(Route)]
#[route("/ws/big")]
struct Big;

#[derive(Route)]
#[route("/ws/held")]
struct HeldBytes;

/// What `/ws/big` takes: messages up to 4 MiB, 8 MiB for all the worker's sockets.
const MAX_MESSAGE: usize = 4 << 20;
const WORKER_BUDGET: usize = 8 << 20;
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// Answers each message with its length and the room its buffer has (the message
/// itself is dropped at once).
async fn big(_: Big, ws: WebSocketUpgrade) -> impl IntoResponse {
    let config = WsConfig {
        max_frame: MAX_MESSAGE,
        max_message: MAX_MESSAGE,
        worker_message_bytes: WORKER_BUDGET,
        heartbeat: None,
        // The answers stay uncompressed, for the raw client to read.
        compress_from: 1024,
        ..WsConfig::default()
    };
    ws.config(config).deflate(Some(DeflateConfig::default())).on_upgrade(|mut socket| async move {
        while let Some(msg) = socket.recv().await {
            let (len, room) = match &msg {
                Message::Binary(bytes) => (bytes.len(), bytes.capacity()),
                Message::Text(text) => (text.len(), text.capacity()),
            };
            drop(msg);
            if socket.send(Message::Text(format!("{len} {room}"))).await.is_err() {
                break;
            }
        }
    })
}

/// The worker's gauge, read on the worker.
async fn held(_: HeldBytes) -> String {
    kiln::http::ws::worker_message_bytes().to_string()
}

fn start() -> kiln::Serving {
    let app = App::new(|_| ()).route(big).route(held);
    kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).unwrap()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "closed after {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

fn handshake(addr: SocketAddr, extra: &str) -> TcpStream {
    let mut s = connect(addr);
    let request = format!(
        "GET /ws/big HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    );
    s.write_all(request.as_bytes()).unwrap();
    let head = read_head(&mut s);
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    s
}

/// The worker's gauge: bytes its sockets hold in messages being received.
fn worker_held(addr: SocketAddr) -> usize {
    let mut s = connect(addr);
    s.write_all(b"GET /ws/held HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    response.rsplit("\r\n\r\n").next().unwrap().parse().unwrap()
}

/// Waits (a hang guard, not a timing) until the gauge reads `want`.
fn until_held(addr: SocketAddr, want: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let held = worker_held(addr);
        if held == want {
            return;
        }
        assert!(Instant::now() < deadline, "the worker holds {held} bytes, not {want}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One masked frame with a payload of `len` bytes, of which `payload` is the start.
fn frame(fin: bool, rsv1: bool, opcode: u8, len: usize, payload: &[u8]) -> Vec<u8> {
    let mask = [0x37, 0xFA, 0x21, 0x3D];
    let mut frame = vec![(u8::from(fin) << 7) | (u8::from(rsv1) << 6) | opcode, 0x80 | 127];
    frame.extend_from_slice(&(len as u64).to_be_bytes());
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

/// Reads one frame: (opcode, payload).
fn read_frame(s: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).unwrap();
    let len = match h[1] & 0x7F {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).unwrap();
            u16::from_be_bytes(b) as usize
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).unwrap();
            u64::from_be_bytes(b) as usize
        }
        n => n as usize,
    };
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).unwrap();
    (h[0] & 0x0F, payload)
}

#[test]
fn websocket_memory_has_an_overall_bound_per_worker() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let serving = start();
    let addr = serving.local_addr();
    // Each client announces a 3 MiB message, sends 1 KiB of it, and reads nothing.
    const ANNOUNCED: usize = 3 << 20;
    let start_of_message = frame(true, false, 0x2, ANNOUNCED, &[7; 1024]);
    let mut holding = Vec::new();
    for i in 0..6 {
        let mut s = handshake(addr, "");
        s.write_all(&start_of_message).unwrap();
        if (i + 1) * ANNOUNCED <= WORKER_BUDGET {
            // Room is made (and charged) for the whole message as its frame starts.
            until_held(addr, (i + 1) * ANNOUNCED);
            holding.push(s);
        } else {
            let (opcode, payload) = read_frame(&mut s);
            assert_eq!(opcode, 0x8, "socket {i}: a close frame");
            assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1009, "socket {i}");
            assert_eq!(worker_held(addr), 2 * ANNOUNCED, "a refused socket holds nothing");
        }
    }
    assert_eq!(holding.len(), 2);
    // A bystander's small message still goes through while the budget is full.
    let mut bystander = handshake(addr, "");
    bystander.write_all(&frame(true, false, 0x1, 5, b"hello")).unwrap();
    let (opcode, answer) = read_frame(&mut bystander);
    assert_eq!((opcode, answer.starts_with(b"5 ")), (0x1, true));
    // The clients that held it go away: the budget is given back.
    drop(holding);
    until_held(addr, 0);
    serving.shutdown();
}

/// The most the heap held above its level when the client began to send `wire`, while
/// `/ws/big` received it, and the room the received message had; its length must be `len`.
fn peak_while_received(addr: SocketAddr, extra: &str, wire: &[u8], len: usize) -> (usize, usize) {
    let mut s = handshake(addr, extra);
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    s.write_all(wire).unwrap();
    let (opcode, answer) = read_frame(&mut s);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    assert_eq!(opcode, 0x1);
    let answer = String::from_utf8(answer).unwrap();
    let (got, room) = answer.split_once(' ').unwrap();
    assert_eq!(got.parse::<usize>().unwrap(), len);
    (peak, room.parse().unwrap())
}

#[test]
fn a_websocket_message_costs_about_its_size_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let serving = start();
    let addr = serving.local_addr();
    const N: usize = 3 << 20;
    let payload: Vec<u8> = (0..N).map(|i| (i % 251) as u8).collect();
    // What besides the message a receive may hold: the read buffer lent (64 KiB), the
    // answer, the inflater's output pieces.
    let slack = 256 * 1024;

    // In one frame (as browsers send): room for exactly the message, made once.
    let whole = frame(true, false, 0x2, N, &payload);
    let (peak, room) = peak_while_received(addr, "", &whole, N);
    assert_eq!(room, N);
    assert!(peak <= N + slack, "one frame of {N} bytes: the heap grew by {peak}");

    // In 48 fragments of 64 KiB, and compressed (permessage-deflate): the total is not
    // known ahead, so the room grows a quarter at a time (not by doubling), and what
    // is handed over holds at most an eighth more than the message. A growth counts
    // here as the old block and the new one at once, as when an allocator copies.
    let mut fragments = Vec::new();
    for (i, piece) in payload.chunks(64 * 1024).enumerate() {
        let (fin, opcode) = (i == N / (64 * 1024) - 1, if i == 0 { 0x2 } else { 0x0 });
        fragments.extend(frame(fin, false, opcode, piece.len(), piece));
    }
    let mut deflater = Compress::new(Compression::fast(), false);
    let mut compressed = Vec::with_capacity(N);
    deflater.compress_vec(&payload, &mut compressed, FlushCompress::Sync).unwrap();
    assert!(compressed.ends_with(&[0, 0, 0xFF, 0xFF]));
    compressed.truncate(compressed.len() - 4);
    let deflated = frame(true, true, 0x2, compressed.len(), &compressed);
    let offer = "Sec-WebSocket-Extensions: permessage-deflate\r\n";
    for (what, extra, wire) in [("in fragments", "", &fragments), ("inflated", offer, &deflated)] {
        let (peak, room) = peak_while_received(addr, extra, wire, N);
        assert!(room <= N + N / 8, "{N} bytes {what}: handed over with room for {room}");
        assert!(peak <= 2 * N + N / 4 + slack, "{N} bytes {what}: the heap grew by {peak}");
    }
    serving.shutdown();
}
