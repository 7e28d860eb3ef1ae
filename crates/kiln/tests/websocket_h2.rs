//! WebSocket over HTTP/2 (RFC 8441) against a real server, through `h2`'s own client:
//! the setting offered only when the app has a WebSocket route (and not when turned
//! off), echo and permessage-deflate on an extended CONNECT's stream, RST_STREAM and
//! shutdown ending the handler's socket, a client that reads nothing stopping the
//! server at its window, the same route answering an HTTP/1.1 upgrade, and the
//! CONNECTs that are no WebSocket refused.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};
use h2::client::SendRequest;
use h2::{RecvStream, SendStream};
use kiln::http::{Limits, Server};
use kiln::ws::{Message, WebSocketUpgrade};
use kiln::{App, IntoResponse, Route};
use tokio::net::TcpStream;
use tokio::time::timeout;

#[derive(Route)]
#[route("/ws/echo")]
struct Echo;

#[derive(Route)]
#[route("/ws/counted")]
struct Counted;

#[derive(Route)]
#[route("/ws/counted-on-close")]
struct CountedOnClose;

#[derive(Route)]
#[route("/ws/flood")]
struct Flood;

#[derive(Route)]
#[route("/plain")]
struct Plain;

/// Sockets of `/ws/counted` whose `recv` has returned its end.
static ENDED: AtomicUsize = AtomicUsize::new(0);
/// The same for `/ws/counted-on-close` (a test of its own: the tests run at once).
static ENDED_ON_CLOSE: AtomicUsize = AtomicUsize::new(0);
/// Messages `/ws/flood` queued before its queue was full.
static QUEUED: AtomicUsize = AtomicUsize::new(0);
/// The size of each of `/ws/flood`'s messages.
const FLOOD_MESSAGE: usize = 16 * 1024;
/// How long any one step may take before the test is a hang.
const HANG: Duration = Duration::from_secs(10);

async fn echo(_: Echo, ws: WebSocketUpgrade) -> impl IntoResponse {
    ws.on_upgrade(|mut socket| async move {
        while let Some(msg) = socket.recv().await {
            if socket.send(msg).await.is_err() {
                break;
            }
        }
    })
}

/// Echoes, then counts the socket's end in `ended`.
fn counting(ws: WebSocketUpgrade, ended: &'static AtomicUsize) -> impl IntoResponse {
    ws.on_upgrade(move |mut socket| async move {
        while let Some(msg) = socket.recv().await {
            let _ = socket.send(msg).await;
        }
        ended.fetch_add(1, Ordering::SeqCst);
    })
}

async fn counted(_: Counted, ws: WebSocketUpgrade) -> impl IntoResponse {
    counting(ws, &ENDED)
}

async fn counted_on_close(_: CountedOnClose, ws: WebSocketUpgrade) -> impl IntoResponse {
    counting(ws, &ENDED_ON_CLOSE)
}

/// Queues messages until the queue is full, then reads until the end.
async fn flood(_: Flood, ws: WebSocketUpgrade) -> impl IntoResponse {
    ws.on_upgrade(|mut socket| async move {
        let mut queued = 0;
        while socket.try_send(Message::Binary(vec![7u8; FLOOD_MESSAGE])).is_ok() {
            queued += 1;
            tokio::task::yield_now().await;
        }
        QUEUED.store(queued, Ordering::SeqCst);
        while socket.recv().await.is_some() {}
    })
}

async fn plain(_: Plain) -> &'static str {
    "plain"
}

fn start_with(limits: Limits) -> kiln::Serving {
    let app = App::new(|_| ()).route(echo).route(counted).route(counted_on_close).route(flood).route(plain);
    kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1).limits(limits)).unwrap()
}

fn start() -> kiln::Serving {
    start_with(Limits::default())
}

/// An h2c connection (prior knowledge) whose server SETTINGS have been read: a
/// request answered first.
async fn connect(addr: SocketAddr, window: u32) -> SendRequest<Bytes> {
    connect_owned(addr, window).await.0
}

/// [`connect`], with the task that runs the connection: aborted, the socket closes.
async fn connect_owned(addr: SocketAddr, window: u32) -> (SendRequest<Bytes>, tokio::task::JoinHandle<()>) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::Builder::new().initial_window_size(window).handshake(tcp).await.unwrap();
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.unwrap();
    let req = http::Request::get(format!("http://{addr}/plain")).body(()).unwrap();
    let (answer, _) = client.send_request(req, true).unwrap();
    assert_eq!(timeout(HANG, answer).await.unwrap().unwrap().status(), 200);
    (client, task)
}

/// An extended CONNECT to `path` asking for `protocol`, with extra header fields.
fn connect_request(addr: SocketAddr, path: &str, protocol: Option<&str>, extra: &[(&str, &str)]) -> http::Request<()> {
    let mut req = http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("http://{addr}{path}"))
        .header("sec-websocket-version", "13");
    for (name, value) in extra {
        req = req.header(*name, *value);
    }
    let mut req = req.body(()).unwrap();
    if let Some(protocol) = protocol {
        req.extensions_mut().insert(h2::ext::Protocol::from(protocol));
    }
    req
}

/// A WebSocket on an h2 stream: the head's status and fields, and both directions.
struct Socket {
    status: u16,
    extensions: Option<String>,
    send: SendStream<Bytes>,
    recv: RecvStream,
    input: Vec<u8>,
}

async fn open(client: &mut SendRequest<Bytes>, req: http::Request<()>) -> Socket {
    let (answer, send) = client.send_request(req, false).unwrap();
    let answer = timeout(HANG, answer).await.unwrap().unwrap();
    let extensions = answer.headers().get("sec-websocket-extensions").map(|v| v.to_str().unwrap().to_owned());
    if answer.status() == 200 {
        assert!(answer.headers().get("content-length").is_none(), "RFC 8441 §5: a 200 with no length");
    }
    Socket { status: answer.status().as_u16(), extensions, send, recv: answer.into_body(), input: Vec::new() }
}

impl Socket {
    /// Sends one masked frame.
    fn frame(&mut self, rsv1: bool, opcode: u8, payload: &[u8]) {
        let mask = [0x37, 0xFA, 0x21, 0x3D];
        let mut out = vec![0x80 | if rsv1 { 0x40 } else { 0 } | opcode];
        match payload.len() {
            n if n < 126 => out.push(0x80 | n as u8),
            n if n < 65536 => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.send.send_data(out.into(), false).unwrap();
    }

    /// The next whole frame from the server: (RSV1, opcode, payload).
    async fn next(&mut self) -> Frame {
        loop {
            if let Some((frame, used)) = parse(&self.input) {
                self.input.drain(..used);
                return frame;
            }
            let data = timeout(HANG, self.recv.data()).await.expect("a frame in time");
            let data = data.expect("the stream ended before a whole frame").unwrap();
            self.recv.flow_control().release_capacity(data.len()).unwrap();
            self.input.extend_from_slice(&data);
        }
    }
}

impl Socket {
    /// Reads to the stream's end (RFC 8441 §5: the close's END_STREAM), with no frame
    /// left before it.
    async fn ended(&mut self) {
        while let Some(data) = timeout(HANG, self.recv.data()).await.expect("the stream's end in time") {
            assert_eq!(data.unwrap(), "", "nothing after the close");
        }
        assert!(self.input.is_empty());
    }
}

/// A server frame: RSV1, opcode, payload.
type Frame = (bool, u8, Vec<u8>);

/// One unmasked server frame at the start of `input`, and its length.
fn parse(input: &[u8]) -> Option<(Frame, usize)> {
    let (b0, b1) = (*input.first()?, *input.get(1)?);
    assert_eq!(b1 & 0x80, 0, "a server frame is not masked");
    let (len, at) = match b1 & 0x7F {
        126 => (u16::from_be_bytes(input.get(2..4)?.try_into().unwrap()) as usize, 4),
        127 => (u64::from_be_bytes(input.get(2..10)?.try_into().unwrap()) as usize, 10),
        n => (n as usize, 2),
    };
    let payload = input.get(at..at + len)?.to_vec();
    Some(((b0 & 0x40 != 0, b0 & 0x0F, payload), at + len))
}

fn close_code(payload: &[u8]) -> u16 {
    u16::from_be_bytes([payload[0], payload[1]])
}

async fn wait_for(what: &str, done: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(started.elapsed() < HANG, "{what}: not in time");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn extended_connect_is_offered_only_by_an_app_with_a_websocket_route_and_not_when_turned_off() {
    let with = start();
    assert!(connect(with.local_addr(), 65535).await.is_extended_connect_protocol_enabled());
    let off = start_with(Limits { h2_extended_connect: false, ..Limits::default() });
    assert!(!connect(off.local_addr(), 65535).await.is_extended_connect_protocol_enabled());
    let app = App::new(|_| ()).route(plain);
    let without = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).unwrap();
    assert!(!connect(without.local_addr(), 65535).await.is_extended_connect_protocol_enabled());
}

#[tokio::test]
async fn text_and_binary_echo_over_an_h2_stream() {
    let serving = start();
    let addr = serving.local_addr();
    let mut client = connect(addr, 65535).await;
    let mut socket = open(&mut client, connect_request(addr, "/ws/echo", Some("websocket"), &[])).await;
    assert_eq!(socket.status, 200);
    socket.frame(false, 0x1, b"hello over h2");
    assert_eq!(socket.next().await, (false, 0x1, b"hello over h2".to_vec()));
    let binary: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
    socket.frame(false, 0x2, &binary);
    assert_eq!(socket.next().await, (false, 0x2, binary));
    // The close handshake, then the stream's end (RFC 8441 §5: END_STREAM).
    socket.frame(false, 0x8, &1000u16.to_be_bytes());
    let (_, opcode, payload) = socket.next().await;
    assert_eq!((opcode, close_code(&payload)), (0x8, 1000));
    socket.ended().await;
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut c = Compress::new(Compression::best(), false);
    let mut out = Vec::with_capacity(data.len() + 64);
    c.compress_vec(data, &mut out, FlushCompress::Sync).unwrap();
    assert!(out.ends_with(&[0, 0, 0xFF, 0xFF]));
    out.truncate(out.len() - 4);
    out
}

#[tokio::test]
async fn permessage_deflate_is_negotiated_and_works_over_h2() {
    let serving = start();
    let addr = serving.local_addr();
    let mut client = connect(addr, 65535).await;
    let offer = [("sec-websocket-extensions", "permessage-deflate; client_max_window_bits")];
    let mut socket = open(&mut client, connect_request(addr, "/ws/echo", Some("websocket"), &offer)).await;
    assert_eq!((socket.status, socket.extensions.as_deref()), (200, Some("permessage-deflate")));
    let text = "compress me over h2, ".repeat(50);
    socket.frame(true, 0x1, &deflate(text.as_bytes()));
    let (rsv1, opcode, payload) = socket.next().await;
    assert!(rsv1 && opcode == 0x1, "a compressed text frame");
    let mut out = Vec::with_capacity(text.len() + 16);
    let input = [payload, vec![0, 0, 0xFF, 0xFF]].concat();
    Decompress::new(false).decompress_vec(&input, &mut out, FlushDecompress::Sync).unwrap();
    assert_eq!(out, text.as_bytes());
}

#[tokio::test]
async fn rst_stream_from_the_client_ends_the_handler_s_socket() {
    let serving = start();
    let addr = serving.local_addr();
    let mut client = connect(addr, 65535).await;
    let mut socket = open(&mut client, connect_request(addr, "/ws/counted", Some("websocket"), &[])).await;
    socket.frame(false, 0x1, b"ping");
    assert_eq!(socket.next().await.2, b"ping");
    socket.send.send_reset(h2::Reason::CANCEL);
    wait_for("the handler's recv returning its end", || ENDED.load(Ordering::SeqCst) == 1).await;
    // The connection goes on serving.
    let mut again = open(&mut client, connect_request(addr, "/ws/echo", Some("websocket"), &[])).await;
    again.frame(false, 0x1, b"still here");
    assert_eq!(again.next().await.2, b"still here");
}

#[tokio::test]
async fn the_client_s_connection_closing_ends_the_handler_s_socket() {
    let serving = start();
    let addr = serving.local_addr();
    let (mut client, task) = connect_owned(addr, 65535).await;
    let mut socket = open(&mut client, connect_request(addr, "/ws/counted-on-close", Some("websocket"), &[])).await;
    socket.frame(false, 0x1, b"ping");
    assert_eq!(socket.next().await.2, b"ping");
    task.abort();
    wait_for("the handler's recv returning its end", || ENDED_ON_CLOSE.load(Ordering::SeqCst) == 1).await;
}

#[tokio::test]
async fn shutdown_closes_h2_sockets_with_1001_and_the_server_exits() {
    let serving = start();
    let addr = serving.local_addr();
    let mut client = connect(addr, 65535).await;
    let mut sockets = Vec::new();
    for _ in 0..3 {
        let mut socket = open(&mut client, connect_request(addr, "/ws/echo", Some("websocket"), &[])).await;
        socket.frame(false, 0x1, b"hi");
        assert_eq!(socket.next().await.2, b"hi");
        sockets.push(socket);
    }
    serving.shutdown();
    for socket in &mut sockets {
        let (_, opcode, payload) = socket.next().await;
        assert_eq!((opcode, close_code(&payload)), (0x8, 1001));
        socket.frame(false, 0x8, &1001u16.to_be_bytes());
        socket.ended().await;
    }
    // Every socket answered its close: nothing holds the worker to the grace period.
    tokio::task::spawn_blocking(move || serving.wait()).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_client_that_reads_nothing_stops_the_server_at_its_window() {
    let serving = start();
    let addr = serving.local_addr();
    let window = 64 * 1024;
    let mut client = connect(addr, window).await;
    let (answer, _send) =
        client.send_request(connect_request(addr, "/ws/flood", Some("websocket"), &[]), false).unwrap();
    let mut recv = timeout(HANG, answer).await.unwrap().unwrap().into_body();
    // The handler queues until its socket's queue is full: the window, the stream's
    // pipe and the socket's 1 MiB queue, then no more.
    wait_for("the handler's queue filling", || QUEUED.load(Ordering::SeqCst) > 0).await;
    let queued = QUEUED.load(Ordering::SeqCst) * FLOOD_MESSAGE;
    assert!(queued < 2 << 20, "{queued} bytes queued for a client that reads nothing");
    // What arrived while nothing was released is the window, not more.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut arrived = 0;
    while let Ok(Some(data)) = timeout(Duration::from_millis(100), recv.data()).await {
        arrived += data.unwrap().len();
    }
    assert!(arrived <= window as usize, "{arrived} bytes sent past a {window}-byte window");
    // Once it reads, every queued message comes.
    let mut total = arrived;
    recv.flow_control().release_capacity(arrived).unwrap();
    while total < queued {
        let data = timeout(HANG, recv.data()).await.unwrap().unwrap().unwrap();
        total += data.len();
        recv.flow_control().release_capacity(data.len()).unwrap();
    }
}

#[tokio::test]
async fn the_same_route_answers_an_http1_upgrade_too() {
    let serving = start();
    let addr = serving.local_addr();
    let answer = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(HANG)).unwrap();
        s.write_all(
            b"GET /ws/echo HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .unwrap();
        let mut head = vec![0u8; 1024];
        let n = s.read(&mut head).unwrap();
        String::from_utf8_lossy(&head[..n]).into_owned()
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 101 Switching Protocols\r\n"), "{answer}");
    assert!(answer.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{answer}");
    // And over h2 on the same server.
    let mut client = connect(addr, 65535).await;
    let socket = open(&mut client, connect_request(addr, "/ws/echo", Some("websocket"), &[])).await;
    assert_eq!(socket.status, 200);
}

#[tokio::test]
async fn a_connect_that_is_no_websocket_is_refused() {
    let serving = start();
    let addr = serving.local_addr();
    let mut client = connect(addr, 65535).await;
    // An unknown protocol, and a WebSocket asked of a route that is none: 405.
    let unknown = open(&mut client, connect_request(addr, "/ws/echo", Some("chat"), &[])).await;
    assert_eq!(unknown.status, 405);
    let not_a_socket = open(&mut client, connect_request(addr, "/plain", Some("websocket"), &[])).await;
    assert_eq!(not_a_socket.status, 405);
    // A plain CONNECT (RFC 9113 §8.5) names a host to tunnel to: kiln is no proxy.
    let req = http::Request::builder().method(http::Method::CONNECT).uri("example.com:443").body(()).unwrap();
    let plain = open(&mut client, req).await;
    assert!(plain.status >= 400, "{}", plain.status);
    // A WebSocket version other than 13.
    let mut req = connect_request(addr, "/ws/echo", Some("websocket"), &[]);
    req.headers_mut().insert("sec-websocket-version", http::HeaderValue::from_static("8"));
    assert_eq!(open(&mut client, req).await.status, 426);
}
