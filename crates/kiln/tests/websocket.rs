//! WebSocket on a typed route, against a real server with a raw client: the handshake
//! (good, 400, 426), echo, fragments, pings, close codes, limits (1009), a deflate
//! bomb, the heartbeat (1011) and drain (1001).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};
use kiln::http::Server;
use kiln::ws::WebSocketUpgrade;
use kiln::{App, IntoResponse, Route};

#[derive(Route)]
#[route("/ws/echo")]
struct Echo;

#[derive(Route)]
#[route("/ws/idle")]
struct Idle;

/// Largest message `/ws/echo` takes.
const LIMIT: usize = 64 * 1024;
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

async fn echo(_: Echo, ws: WebSocketUpgrade) -> impl IntoResponse {
    ws.max_message(LIMIT).on_upgrade(|mut socket| async move {
        while let Some(msg) = socket.recv().await {
            if socket.send(msg).await.is_err() {
                break;
            }
        }
    })
}

/// A heartbeat short enough for a test; the test never depends on how short.
async fn idle(_: Idle, ws: WebSocketUpgrade) -> impl IntoResponse {
    ws.heartbeat(Some(Duration::from_millis(100)))
        .on_upgrade(|mut socket| async move { while socket.recv().await.is_some() {} })
}

fn start() -> kiln::Serving {
    let app = App::new(|_| ()).route(echo).route(idle);
    kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).unwrap()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Sends a request and reads its head (and nothing after it).
fn request(s: &mut TcpStream, raw: &str) -> String {
    s.write_all(raw.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "closed after {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

fn handshake(addr: SocketAddr, path: &str, extra: &str) -> (TcpStream, String) {
    let mut s = connect(addr);
    let head = request(
        &mut s,
        &format!(
            "GET {path} HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\
             Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
        ),
    );
    assert!(head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"), "{head}");
    (s, head)
}

/// Sends one masked frame.
fn send(s: &mut TcpStream, fin: bool, rsv1: bool, opcode: u8, payload: &[u8]) {
    let mask = [0x37, 0xFA, 0x21, 0x3D];
    let mut frame = vec![(u8::from(fin) << 7) | (u8::from(rsv1) << 6) | opcode];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n < 65536 => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    s.write_all(&frame).unwrap();
}

/// Reads one frame: (fin, rsv1, opcode, payload).
fn recv(s: &mut TcpStream) -> (bool, bool, u8, Vec<u8>) {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).unwrap();
    assert_eq!(h[1] & 0x80, 0, "a server never masks");
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
    (h[0] & 0x80 != 0, h[0] & 0x40 != 0, h[0] & 0x0F, payload)
}

/// Reads the close frame, answers it, and reads the end of the stream; returns the
/// close code.
fn expect_close(s: &mut TcpStream) -> u16 {
    let (_, _, opcode, payload) = recv(s);
    assert_eq!(opcode, 0x8, "expected a close frame, got opcode {opcode}: {payload:?}");
    let code = u16::from_be_bytes([payload[0], payload[1]]);
    // Answered as a client does (a peer that stopped answering is not waited for).
    let _ = s.write_all(&[0x88, 0x82, 0, 0, 0, 0, payload[0], payload[1]]);
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(rest.is_empty(), "bytes after the close frame: {rest:?}");
    code
}

#[test]
fn the_handshake_answers_101_with_the_accept_key() {
    let serving = start();
    let (_, head) = handshake(serving.local_addr(), "/ws/echo", "");
    // RFC 6455 §1.3's example key and answer.
    assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{head}");
    assert!(head.contains("Upgrade: websocket\r\n") && head.contains("Connection: Upgrade\r\n"), "{head}");
    assert!(!head.contains("Sec-WebSocket-Extensions"), "nothing offered, nothing agreed: {head}");
}

#[test]
fn a_bad_handshake_is_refused_with_400_or_426() {
    let serving = start();
    let cases: &[(&str, &str)] = &[
        ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n", "400"),
        (
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: c2hvcnQ=\r\n",
            "400",
        ),
        ("Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "400"),
        ("Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "400"),
        (
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
            "426",
        ),
    ];
    for (headers, status) in cases {
        let mut s = connect(serving.local_addr());
        let head = request(&mut s, &format!("GET /ws/echo HTTP/1.1\r\nHost: a\r\n{headers}\r\n"));
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{headers:?}: {head}");
        if *status == "426" {
            assert!(head.contains("Sec-WebSocket-Version: 13\r\n"), "{head}");
        }
    }
}

#[test]
fn a_handshake_with_two_sec_websocket_keys_is_refused_with_400() {
    // RFC 6455 §11.3.1: the field appears once; two keys were answered 101.
    let serving = start();
    let mut s = connect(serving.local_addr());
    let head = request(
        &mut s,
        &format!(
            "GET /ws/echo HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Key: {KEY}\r\n\r\n"
        ),
    );
    assert!(head.starts_with("HTTP/1.1 400 "), "{head}");
}

#[test]
fn text_and_binary_are_echoed_as_sent() {
    let serving = start();
    let (mut s, _) = handshake(serving.local_addr(), "/ws/echo", "");
    send(&mut s, true, false, 0x1, "héllo".as_bytes());
    assert_eq!(recv(&mut s), (true, false, 0x1, "héllo".as_bytes().to_vec()));
    let big: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
    send(&mut s, true, false, 0x2, &big);
    assert_eq!(recv(&mut s), (true, false, 0x2, big));
    send(&mut s, true, false, 0x8, &1000u16.to_be_bytes());
    assert_eq!(expect_close(&mut s), 1000, "the close handshake echoes the code");
}

#[test]
fn fragments_are_reassembled_and_a_ping_between_them_is_answered() {
    let serving = start();
    let (mut s, _) = handshake(serving.local_addr(), "/ws/echo", "");
    send(&mut s, false, false, 0x1, b"frag");
    send(&mut s, true, false, 0x9, b"are you there");
    send(&mut s, false, false, 0x0, b"men");
    send(&mut s, true, false, 0x0, b"ted");
    assert_eq!(recv(&mut s), (true, false, 0xA, b"are you there".to_vec()), "the pong comes first");
    assert_eq!(recv(&mut s), (true, false, 0x1, b"fragmented".to_vec()));
}

#[test]
fn protocol_errors_close_with_their_code() {
    let serving = start();
    let cases: &[(u8, &[u8], u16)] = &[
        (0x1, &[0xCE, 0xBA, 0xED, 0xA0, 0x80], 1007), // not UTF-8
        (0x8, &[0x03, 0xE7], 1002),                   // close code 999
        (0x8, &[0x03], 1002),                         // close payload of one byte
        (0x3, b"", 1002),                             // reserved opcode
        (0x0, b"x", 1002),                            // continuation of nothing
    ];
    for (opcode, payload, code) in cases {
        let (mut s, _) = handshake(serving.local_addr(), "/ws/echo", "");
        send(&mut s, true, false, *opcode, payload);
        assert_eq!(expect_close(&mut s), *code, "opcode {opcode} payload {payload:?}");
    }
}

#[test]
fn a_message_over_the_limit_closes_with_1009() {
    let serving = start();
    let (mut s, _) = handshake(serving.local_addr(), "/ws/echo", "");
    // Fragments each under the limit, together over it.
    send(&mut s, false, false, 0x2, &vec![0u8; LIMIT / 2 + 1]);
    send(&mut s, true, false, 0x0, &vec![0u8; LIMIT / 2 + 1]);
    assert_eq!(expect_close(&mut s), 1009);
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut c = Compress::new(Compression::best(), false);
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    while (c.total_in() as usize) < data.len() || out.len() == out.capacity() {
        out.reserve(64 * 1024);
        c.compress_vec(&data[c.total_in() as usize..], &mut out, FlushCompress::Sync).unwrap();
    }
    assert!(out.ends_with(&[0, 0, 0xFF, 0xFF]));
    out.truncate(out.len() - 4);
    out
}

#[test]
fn permessage_deflate_is_negotiated_and_messages_echo_compressed() {
    let serving = start();
    let offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
    let (mut s, head) = handshake(serving.local_addr(), "/ws/echo", offer);
    assert!(head.contains("Sec-WebSocket-Extensions: permessage-deflate\r\n"), "{head}");
    let text = "compress me, compress me, compress me".repeat(20);
    send(&mut s, true, true, 0x1, &deflate(text.as_bytes()));
    let (fin, rsv1, opcode, payload) = recv(&mut s);
    assert!(fin && rsv1 && opcode == 0x1, "a compressed text frame");
    let mut d = Decompress::new(false);
    let mut out = Vec::with_capacity(text.len() + 16);
    d.decompress_vec(&[payload, vec![0, 0, 0xFF, 0xFF]].concat(), &mut out, FlushDecompress::Sync).unwrap();
    assert_eq!(out, text.as_bytes());
}

#[test]
fn a_deflate_bomb_is_stopped_at_the_message_limit() {
    let serving = start();
    let offer = "Sec-WebSocket-Extensions: permessage-deflate\r\n";
    let (mut s, _) = handshake(serving.local_addr(), "/ws/echo", offer);
    // 10 MiB of zeros in about 10 KiB: the server must stop inflating at 64 KiB.
    let bomb = deflate(&vec![0u8; 10 << 20]);
    assert!(bomb.len() < LIMIT);
    send(&mut s, true, true, 0x2, &bomb);
    assert_eq!(expect_close(&mut s), 1009);
}

#[test]
fn a_peer_that_stops_answering_is_pinged_then_closed_with_1011() {
    let serving = start();
    let (mut s, _) = handshake(serving.local_addr(), "/ws/idle", "");
    // Silent: the heartbeat pings, and with no pong, closes.
    let (_, _, opcode, _) = recv(&mut s);
    assert_eq!(opcode, 0x9, "a ping first");
    assert_eq!(expect_close(&mut s), 1011);
}

#[test]
fn drain_closes_open_sockets_with_1001() {
    let serving = start();
    let (mut s, _) = handshake(serving.local_addr(), "/ws/echo", "");
    send(&mut s, true, false, 0x1, b"still here");
    assert_eq!(recv(&mut s).3, b"still here");
    serving.shutdown();
    let (_, _, opcode, payload) = recv(&mut s);
    assert_eq!((opcode, u16::from_be_bytes([payload[0], payload[1]])), (0x8, 1001));
    send(&mut s, true, false, 0x8, &1001u16.to_be_bytes());
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    serving.wait().unwrap();
}

#[test]
fn drain_closes_hundreds_of_sockets_and_the_server_exits() {
    let serving = start();
    let addr = serving.local_addr();
    let mut sockets: Vec<TcpStream> = (0..300).map(|_| handshake(addr, "/ws/echo", "").0).collect();
    serving.shutdown();
    for s in &mut sockets {
        assert_eq!(expect_close(s), 1001);
    }
    // Every socket answered its close, so nothing holds the worker to the grace period.
    serving.wait().unwrap();
}
