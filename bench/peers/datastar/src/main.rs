//! Datastar peer of the live-view benchmark (bench/peers/datastar/README.md): the counter,
//! table and chat pages of LIVEBENCH.md as HTML with Datastar attributes, each with an SSE
//! endpoint its page opens on load that streams `datastar-patch-elements` events written by
//! Datastar's Rust SDK (axum feature) on every change, plus the POST triggers. One worker: a
//! current-thread tokio runtime.

mod render;
mod state;
mod streams;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::Router;
use serde::Deserialize;

use crate::state::Shared;

/// Longest chat line, in bytes of UTF-8.
const MAX_LINE: usize = 200;

async fn counter_page(State(shared): State<Arc<Shared>>) -> Html<String> {
    Html(render::counter_page(shared.count()))
}

async fn table_page(State(shared): State<Arc<Shared>>) -> Html<String> {
    Html(render::table_page(&streams::default_body(&shared.rows())))
}

async fn chat_page(State(shared): State<Arc<Shared>>) -> Html<String> {
    Html(render::chat_page(&render::room(&shared.lines())))
}

async fn bump(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.bump();
    StatusCode::OK
}

async fn change(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.change();
    StatusCode::OK
}

/// What the chat page's form posts: its signals.
#[derive(Deserialize)]
struct Say {
    line: String,
}

/// `POST /bench/live/chat/say`: the body is the line, or, from the page's form (a Datastar
/// request), the JSON of its signals with the line in `line`.
async fn say(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> (StatusCode, &'static str) {
    let text = if headers.contains_key("datastar-request") {
        serde_json::from_slice::<Say>(&body).map(|say| say.line).ok()
    } else {
        String::from_utf8(body.to_vec()).ok()
    };
    match text {
        None => (StatusCode::BAD_REQUEST, "the line is not UTF-8 text (or the signals not JSON with a `line`)\n"),
        Some(text) if text.is_empty() => (StatusCode::BAD_REQUEST, "empty line\n"),
        Some(text) if text.len() > MAX_LINE => (StatusCode::PAYLOAD_TOO_LARGE, "a line is at most 200 bytes\n"),
        Some(text) => {
            shared.say(&text);
            (StatusCode::OK, "")
        }
    }
}

/// The Datastar client the pages load, read from `$DATASTAR_JS` (bench/peers/datastar/README.md
/// says where it comes from); 404 while there is none, which only a browser notices.
async fn client() -> Response {
    let path = std::env::var("DATASTAR_JS").unwrap_or_else(|_| "datastar.js".to_owned());
    match tokio::fs::read(&path).await {
        Ok(js) => ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], js).into_response(),
        Err(_) => {
            (StatusCode::NOT_FOUND, "no Datastar client here: see bench/peers/datastar/README.md\n").into_response()
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let app = Router::new()
        .route("/pong", get(|| async { "PONG" }))
        .route("/static/datastar.js", get(client))
        .route("/bench/live/counter", get(counter_page))
        .route("/bench/live/counter/updates", get(streams::counter))
        .route("/bench/live/counter/bump", post(bump))
        .route("/bench/live/table", get(table_page))
        .route("/bench/live/table/updates", get(streams::table))
        .route("/bench/live/table/change", post(change))
        .route("/bench/live/chat", get(chat_page))
        .route("/bench/live/chat/updates", get(streams::chat))
        .route("/bench/live/chat/say", post(say))
        .with_state(Shared::new());
    // No Nagle delay on the updates, as the other peers and kiln (axum::serve leaves it on).
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await
}
