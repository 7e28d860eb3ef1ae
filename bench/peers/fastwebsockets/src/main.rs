//! fastwebsockets WebSocket echo peer: hyper 1 serves HTTP/1.1 and hands `GET /ws/echo` to
//! fastwebsockets' upgrade, which echoes every text and binary message as sent; current-thread
//! tokio runtime (one worker). `GET /pong` answers the suite's readiness probe.

use fastwebsockets::{upgrade, FragmentCollector, OpCode, WebSocketError};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

async fn echo(fut: upgrade::UpgradeFut) -> Result<(), WebSocketError> {
    // FragmentCollector reassembles fragmented messages, so each echo is one whole message;
    // pings are answered and close frames returned by fastwebsockets itself (auto_pong,
    // auto_close are on by default).
    let mut ws = FragmentCollector::new(fut.await?);
    loop {
        let frame = ws.read_frame().await?;
        match frame.opcode {
            OpCode::Close => return Ok(()),
            OpCode::Text | OpCode::Binary => ws.write_frame(frame).await?,
            _ => {}
        }
    }
}

async fn route(mut req: Request<Incoming>) -> Result<Response<Full<Bytes>>, WebSocketError> {
    match req.uri().path() {
        "/ws/echo" if upgrade::is_upgrade_request(&req) => {
            let (response, fut) = upgrade::upgrade(&mut req)?;
            tokio::spawn(async move {
                if let Err(e) = echo(fut).await {
                    if !matches!(e, WebSocketError::ConnectionClosed | WebSocketError::UnexpectedEOF) {
                        eprintln!("websocket: {e}");
                    }
                }
            });
            Ok(response.map(|_| Full::new(Bytes::new())))
        }
        "/pong" => Ok(Response::new(Full::new(Bytes::from_static(b"PONG")))),
        _ => {
            let mut response = Response::new(Full::new(Bytes::from_static(b"not found")));
            *response.status_mut() = StatusCode::NOT_FOUND;
            Ok(response)
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service_fn(route)).with_upgrades();
            let _ = conn.await;
        });
    }
}
