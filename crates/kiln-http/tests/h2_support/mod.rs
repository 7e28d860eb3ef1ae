//! For the HTTP/2 tests: `h2`'s client over a plain or TLS stream, and raw frames
//! written by hand for the floods, which no well-behaved client would send.

#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::Bytes;
use h2::client::SendRequest;
use tokio::io::{AsyncRead, AsyncWrite};

/// How long a test waits on anything before it fails instead of hanging.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// A response read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn body_str(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

/// An HTTP/2 client over `io` (h2c with prior knowledge on a plain socket); its
/// connection runs on a task of its own.
pub async fn client<T: AsyncRead + AsyncWrite + Unpin + Send + 'static>(io: T) -> SendRequest<Bytes> {
    let (client, conn) = tokio::time::timeout(CLIENT_TIMEOUT, h2::client::handshake(io)).await.unwrap().unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

/// An HTTP/2 client on a new plain connection to `addr`.
pub async fn connect(addr: SocketAddr) -> SendRequest<Bytes> {
    client(tokio::net::TcpStream::connect(addr).await.unwrap()).await
}

/// Sends one request (with `body`, if any) and reads its answer whole.
pub async fn send(client: &SendRequest<Bytes>, method: &str, path: &str, body: &[u8]) -> Result<Answer, h2::Error> {
    let req = http::Request::builder().method(method).uri(format!("http://localhost{path}")).body(()).unwrap();
    let mut client = client.clone().ready().await?;
    let (answer, mut stream) = client.send_request(req, body.is_empty())?;
    if !body.is_empty() {
        stream.send_data(Bytes::copy_from_slice(body), true)?;
    }
    tokio::time::timeout(CLIENT_TIMEOUT, read_answer(answer)).await.expect("no answer in time")
}

/// `GET path`.
pub async fn get(client: &SendRequest<Bytes>, path: &str) -> Answer {
    send(client, "GET", path, b"").await.unwrap()
}

async fn read_answer(answer: h2::client::ResponseFuture) -> Result<Answer, h2::Error> {
    let (head, mut body) = answer.await?.into_parts();
    let mut bytes = Vec::new();
    while let Some(piece) = body.data().await {
        let piece = piece?;
        let _ = body.flow_control().release_capacity(piece.len());
        bytes.extend_from_slice(&piece);
    }
    Ok(Answer { status: head.status.as_u16(), headers: head.headers, body: bytes })
}

// Raw frames (RFC 9113 §4.1, §6), for the floods.

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

pub const NO_ERROR: u32 = 0x0;
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const CANCEL: u32 = 0x8;
pub const REFUSED_STREAM: u32 = 0x7;
pub const COMPRESSION_ERROR: u32 = 0x9;
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// One frame: its 9-byte header, then `payload`.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut out = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// A SETTINGS frame with these (identifier, value) pairs.
pub fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let payload: Vec<u8> =
        pairs.iter().flat_map(|(id, v)| [&id.to_be_bytes()[..], &v.to_be_bytes()].concat()).collect();
    frame(SETTINGS, 0, 0, &payload)
}

/// The client's preface and an empty SETTINGS frame.
pub fn opening() -> Vec<u8> {
    [PREFACE, &settings(&[])].concat()
}

/// An HPACK block for `GET path` on `localhost` over http, every field a literal
/// without indexing or a static-table entry (RFC 7541 §6.1, §6.2.2), no Huffman.
pub fn get_block(method: &str, path: &str) -> Vec<u8> {
    let mut block = Vec::new();
    literal(&mut block, 2, method.as_bytes());
    block.push(0x86); // :scheme http
    literal(&mut block, 4, path.as_bytes());
    literal(&mut block, 1, b"localhost");
    block
}

/// A literal field without indexing whose name is static-table entry `index`.
pub fn literal(block: &mut Vec<u8>, index: u8, value: &[u8]) {
    assert!(index < 15 && value.len() < 127);
    block.push(index);
    block.push(value.len() as u8);
    block.extend_from_slice(value);
}

/// A RST_STREAM frame.
pub fn rst_stream(stream: u32, code: u32) -> Vec<u8> {
    frame(RST_STREAM, 0, stream, &code.to_be_bytes())
}

/// A frame read back: type, flags, stream and payload.
#[derive(Debug)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The error code of a GOAWAY or RST_STREAM.
    pub fn code(&self) -> u32 {
        let at = if self.kind == GOAWAY { 4 } else { 0 };
        u32::from_be_bytes(self.payload[at..at + 4].try_into().unwrap())
    }
}

/// Reads one frame; `None` when the server closed (or reset) the connection.
pub fn read_frame(s: &mut TcpStream) -> Option<Frame> {
    let mut head = [0u8; 9];
    read_exact(s, &mut head)?;
    let len = (head[0] as usize) << 16 | (head[1] as usize) << 8 | head[2] as usize;
    let mut payload = vec![0; len];
    read_exact(s, &mut payload)?;
    let stream = u32::from_be_bytes(head[5..9].try_into().unwrap()) & 0x7fff_ffff;
    Some(Frame { kind: head[3], flags: head[4], stream, payload })
}

fn read_exact(s: &mut TcpStream, buf: &mut [u8]) -> Option<()> {
    match s.read_exact(buf) {
        Ok(()) => Some(()),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset) => None,
        Err(e) => panic!("read failed: {e}"),
    }
}

/// Reads frames until a GOAWAY (returned) or the close (`None`).
pub fn until_goaway(s: &mut TcpStream) -> Option<Frame> {
    loop {
        let frame = read_frame(s)?;
        if frame.kind == GOAWAY {
            return Some(frame);
        }
    }
}

/// A raw connection that has sent its preface and SETTINGS.
pub fn raw(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    s.write_all(&opening()).unwrap();
    s
}
