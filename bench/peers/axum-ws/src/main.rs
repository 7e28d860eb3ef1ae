//! axum WebSocket echo peer: `GET /ws/echo` echoes every text and binary message as sent, on a
//! current-thread tokio runtime (one worker); `GET /pong` answers the suite's readiness probe.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::Router;

async fn echo(ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(echo_messages)
}

async fn echo_messages(mut socket: WebSocket) {
    // tungstenite answers pings and close frames itself; its close reply goes out on the next
    // read, so a close frame is not a reason to stop reading: the stream ends after it.
    while let Some(Ok(msg)) = socket.recv().await {
        match msg {
            Message::Text(_) | Message::Binary(_) => {
                if socket.send(msg).await.is_err() {
                    return;
                }
            }
            Message::Close(_) | Message::Ping(_) | Message::Pong(_) => {}
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let app = Router::new().route("/pong", get(|| async { "PONG" })).route("/ws/echo", get(echo));
    // No Nagle delay on the echoes, as the other peers and kiln (axum::serve leaves it on).
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await
}
