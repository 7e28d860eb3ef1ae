//! A WebSocket over TLS: the upgraded transport is the TLS stream, so frames are
//! encrypted both ways, and the echo, the ping and the close handshake work as on
//! plain TCP.

mod tls_support;

use kiln_http::ws::{WebSocket, WsConfig};
use kiln_http::{Limits, Request, Response, Server, StatusCode, Tls, service_fn};
use tls_support::{CLIENT_TIMEOUT, Cert, TempDir, client, connect, stop};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::version::TLS13;

/// Upgrades every request (the handshake's checks are the framework's) and echoes.
fn upgrade(_: Request<'_>, res: &mut Response) {
    res.set_status(StatusCode::SWITCHING_PROTOCOLS);
    res.append_header_unchecked(b"Upgrade", b"websocket");
    res.append_header_unchecked(b"Connection", b"Upgrade");
    res.set_upgrade(Box::new(|upgraded| {
        Box::pin(async move {
            let mut socket = WebSocket::new(upgraded, WsConfig::default(), None);
            while let Some(msg) = socket.recv().await {
                if socket.send(msg).await.is_err() {
                    break;
                }
            }
        })
    }));
}

/// A masked frame with a short payload.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [9, 8, 7, 6];
    let mut out = vec![0x80 | opcode, 0x80 | payload.len() as u8];
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// Reads one short unmasked frame: (opcode, payload).
async fn read_frame(stream: &mut (impl AsyncRead + Unpin)) -> (u8, Vec<u8>) {
    let mut h = [0u8; 2];
    stream.read_exact(&mut h).await.unwrap();
    let mut payload = vec![0u8; usize::from(h[1] & 0x7F)];
    stream.read_exact(&mut payload).await.unwrap();
    (h[0] & 0x0F, payload)
}

#[tokio::test]
async fn a_websocket_over_tls_echoes_answers_pings_and_closes() {
    let (cert, dir) = (Cert::new(), TempDir::new("ws"));
    let (cert_path, key_path) = cert.write(dir.path());
    let server = Server::new()
        .listen("127.0.0.1:0")
        .workers(1)
        .limits(Limits::default())
        .tls(Tls::new(cert_path, key_path))
        .serve(|_| service_fn(upgrade))
        .unwrap();
    let mut stream = connect(server.local_addr(), &client(&cert.der, &[&TLS13], false)).await;
    let talk = async {
        // The first frame rides with the request: it is read ahead, then handed over.
        let mut first = b"GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".to_vec();
        first.extend(frame(0x1, b"over tls"));
        stream.write_all(&first).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            head.push(stream.read_u8().await.unwrap());
        }
        assert!(head.starts_with(b"HTTP/1.1 101 "), "{}", String::from_utf8_lossy(&head));
        assert_eq!(read_frame(&mut stream).await, (0x1, b"over tls".to_vec()));
        stream.write_all(&frame(0x9, b"ping")).await.unwrap();
        assert_eq!(read_frame(&mut stream).await, (0xA, b"ping".to_vec()));
        stream.write_all(&frame(0x8, &1000u16.to_be_bytes())).await.unwrap();
        assert_eq!(read_frame(&mut stream).await, (0x8, 1000u16.to_be_bytes().to_vec()));
    };
    tokio::time::timeout(CLIENT_TIMEOUT, talk).await.expect("the exchange in time");
    stop(server);
}
