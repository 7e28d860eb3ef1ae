//! A relay that lets an HTTP/1.1 WebSocket client test kiln's WebSocket over HTTP/2
//! (RFC 8441): Autobahn's fuzzing client speaks only HTTP/1.1, so each of its
//! handshakes is answered here (`101`, with the extensions kiln agreed to) after the
//! same handshake went to kiln as an extended CONNECT on an h2c connection, and the
//! bytes are then piped both ways unchanged: what Autobahn judges is kiln's socket on
//! an HTTP/2 stream. `scripts/autobahn h2` runs it.
//!
//! ```text
//! cargo run -p kiln --example autobahn_h2_relay -- 127.0.0.1:9002 127.0.0.1:8080
//! ```

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use h2::client::SendRequest;
use sha1::{Digest, Sha1};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Most bytes of a handshake's head.
const MAX_HEAD: usize = 16 * 1024;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(target)) = (args.next(), args.next()) else {
        eprintln!("usage: autobahn_h2_relay LISTEN_ADDR KILN_H2C_ADDR");
        std::process::exit(2);
    };
    let target: SocketAddr = target.parse().expect("a socket address to relay to");
    let listener = TcpListener::bind(&listen).await.expect("the address to listen on");
    loop {
        let (client, _) = listener.accept().await.expect("accept");
        tokio::spawn(async move {
            if let Err(e) = relay(client, target).await {
                eprintln!("autobahn_h2_relay: {e}");
            }
        });
    }
}

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// One client: its handshake answered from kiln's, then its bytes piped.
async fn relay(mut client: TcpStream, target: SocketAddr) -> Result<(), Failure> {
    let (head, early) = read_head(&mut client).await?;
    let path = head.split(' ').nth(1).ok_or("no request target")?.to_owned();
    let field = |name: &str| {
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .filter(|(n, _)| n.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_owned())
            .collect::<Vec<_>>()
    };
    let key = field("sec-websocket-key").pop().ok_or("no Sec-WebSocket-Key")?;
    let mut h2 = connect(target).await?;
    let mut req = http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("http://{target}{path}"))
        .header("sec-websocket-version", "13");
    for offer in field("sec-websocket-extensions") {
        req = req.header("sec-websocket-extensions", offer);
    }
    let mut req = req.body(())?;
    req.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
    let (answer, mut up) = h2.send_request(req, false)?;
    let answer = answer.await?;
    if answer.status() != 200 {
        let refusal = format!("HTTP/1.1 {} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", answer.status());
        client.write_all(refusal.as_bytes()).await?;
        return Ok(());
    }
    let mut accept = Sha1::new();
    accept.update(key.as_bytes());
    accept.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    let accept = base64::engine::general_purpose::STANDARD.encode(accept.finalize());
    let mut reply = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n"
    );
    if let Some(agreed) = answer.headers().get("sec-websocket-extensions") {
        reply.push_str(&format!("Sec-WebSocket-Extensions: {}\r\n", agreed.to_str()?));
    }
    reply.push_str("\r\n");
    client.write_all(reply.as_bytes()).await?;
    let mut down = answer.into_body();
    let (mut from_client, mut to_client) = client.into_split();
    let upstream = async move {
        if !early.is_empty() {
            up.send_data(Bytes::from(early), false)?;
        }
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from_client.read(&mut buf).await?;
            // The client's close (or its reset) ends the stream (RFC 8441 §5).
            up.send_data(Bytes::copy_from_slice(&buf[..n]), n == 0)?;
            if n == 0 {
                return Ok::<(), Failure>(());
            }
        }
    };
    let downstream = async move {
        while let Some(data) = down.data().await {
            let data = data?;
            let _ = down.flow_control().release_capacity(data.len());
            to_client.write_all(&data).await?;
        }
        to_client.shutdown().await?;
        Ok::<(), Failure>(())
    };
    // Either side's end ends the pair once the other has what was in flight.
    let (up, down) = tokio::join!(upstream, downstream);
    down.and(up.or(Ok(())))
}

/// Reads the HTTP/1.1 request head; what the client sent past it comes back too.
async fn read_head(client: &mut TcpStream) -> Result<(String, Vec<u8>), Failure> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8(buf[..end].to_vec())?;
            return Ok((head, buf[end + 4..].to_vec()));
        }
        if buf.len() > MAX_HEAD {
            return Err("handshake head too large".into());
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err("closed before the handshake".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// An h2c connection to kiln that has offered extended CONNECT.
async fn connect(target: SocketAddr) -> Result<SendRequest<Bytes>, Failure> {
    let (h2, conn) = h2::client::handshake(TcpStream::connect(target).await?).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let h2 = h2.ready().await?;
    // The server's SETTINGS are read by the connection's task; they come first.
    for _ in 0..2000 {
        if h2.is_extended_connect_protocol_enabled() {
            return Ok(h2);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Err("kiln did not offer extended CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL)".into())
}
