//! A raw client for responses that stay open (streams, Server-Sent Events): it reads
//! what the server sends, as it arrives, up to what the test waits for. It is for a
//! real server (several workers, TLS, a spawned binary); an app driven in process
//! has `kiln::test` (`TestRequest::open`, `TestRequest::websocket`) instead.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long a test waits for bytes a stream should send before calling it a hang.
const STREAM_TIMEOUT: Duration = Duration::from_secs(15);

/// An open connection to a streaming response.
#[derive(Debug)]
pub struct Streaming {
    stream: TcpStream,
    /// Read but not yet handed to the test.
    pending: Vec<u8>,
}

impl Streaming {
    /// Connects to `addr` and sends `raw` as it is.
    pub fn open(addr: SocketAddr, raw: &str) -> Streaming {
        let mut stream = TcpStream::connect_timeout(&addr, STREAM_TIMEOUT).expect("connect");
        stream.set_read_timeout(Some(STREAM_TIMEOUT)).expect("read timeout");
        stream.write_all(raw.as_bytes()).expect("send the request");
        Streaming { stream, pending: Vec::new() }
    }

    /// Reads until `end` has arrived and returns everything up to and including it;
    /// what came after stays for the next call. Panics on a close or a timeout.
    pub fn read_until(&mut self, end: &str) -> String {
        let mut buf = [0u8; 8192];
        loop {
            if let Some(at) = self.pending.windows(end.len()).position(|w| w == end.as_bytes()) {
                let rest = self.pending.split_off(at + end.len());
                let got = std::mem::replace(&mut self.pending, rest);
                return String::from_utf8_lossy(&got).into_owned();
            }
            let n = self.stream.read(&mut buf).unwrap_or_else(|e| {
                panic!("waiting for {end:?}, got {:?}: {e}", String::from_utf8_lossy(&self.pending))
            });
            assert!(n > 0, "closed while waiting for {end:?}; got {:?}", String::from_utf8_lossy(&self.pending));
            self.pending.extend_from_slice(&buf[..n]);
        }
    }

    /// Reads until the server closes and returns what came (a reset counts as a close).
    pub fn read_to_close(&mut self) -> String {
        let mut rest = std::mem::take(&mut self.pending);
        let mut buf = [0u8; 8192];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => rest.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("waiting for the close, got {:?}: {e}", String::from_utf8_lossy(&rest)),
            }
        }
        String::from_utf8_lossy(&rest).into_owned()
    }

    /// The connection, to write more or to shut it down.
    pub fn socket(&mut self) -> &mut TcpStream {
        &mut self.stream
    }
}
