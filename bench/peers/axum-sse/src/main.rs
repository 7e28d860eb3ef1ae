//! axum peer for the SSE fan-out (issue 23): `GET /bench/events` streams every message
//! of one `tokio::sync::broadcast` channel as Server-Sent Events (axum's `Sse`);
//! `POST /bench/publish` sends its body (the load generator's send time) to the channel
//! and answers the number of subscribers it reached. A current-thread runtime: one core,
//! as kiln's one worker. `GET /pong` answers the suite's readiness probe.

use std::convert::Infallible;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, Sse};
use axum::routing::{get, post};
use axum::Router;
use futures_util::stream::{Stream, StreamExt};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

/// Messages a slow subscriber may fall behind before it misses some (it then skips them).
const CAPACITY: usize = 64;
/// Longest body `/bench/publish` accepts, as kiln's endpoint.
const MAX_PAYLOAD: usize = 256;

async fn events(State(tx): State<broadcast::Sender<String>>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = BroadcastStream::new(tx.subscribe())
        .filter_map(|message| async move { message.ok().map(|data| Ok(Event::default().data(data))) });
    Sse::new(stream)
}

async fn publish(State(tx): State<broadcast::Sender<String>>, body: String) -> (StatusCode, String) {
    if body.len() > MAX_PAYLOAD {
        return (StatusCode::BAD_REQUEST, format!("at most {MAX_PAYLOAD} bytes\n"));
    }
    let reached = tx.send(body).unwrap_or(0);
    (StatusCode::OK, format!("{reached}\n"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let (tx, _) = broadcast::channel::<String>(CAPACITY);
    let app = Router::new()
        .route("/pong", get(|| async { "PONG" }))
        .route("/bench/events", get(events))
        .route("/bench/publish", post(publish))
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    axum::serve(listener, app).await
}
