//! A raw HTTP/1.1 client: one request on a fresh connection that closes after the
//! response, so a test sees exactly the bytes the server sent.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long one request may take before the test calls it a hang.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A whole response.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The status line and the headers.
    pub head: String,
    /// The body, as sent.
    pub body: Vec<u8>,
}

impl Reply {
    /// The first header of this name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The body as text.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("UTF-8 body")
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("bad JSON ({e}): {}", self.text()))
    }
}

/// `GET target`.
pub fn get(addr: SocketAddr, target: &str) -> std::io::Result<Reply> {
    request(addr, &format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
}

/// Sends `raw` as it is and reads the response until the server closes.
pub fn request(addr: SocketAddr, raw: &str) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&addr, REQUEST_TIMEOUT)?;
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    stream.write_all(raw.as_bytes())?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes)?;
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| std::io::Error::other("no head"))?;
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| std::io::Error::other("status"))?;
    Ok(Reply { status, head, body: bytes[split + 4..].to_vec() })
}
