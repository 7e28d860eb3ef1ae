//! axum peer: the kiln benchmark contract on a current-thread tokio runtime (one worker).

#[cfg(feature = "h2")]
mod tls;

use axum::extract::Query;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use maud::html;
use serde::{Deserialize, Serialize};
use tower_http::services::ServeDir;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Deserialize)]
struct TableSize {
    rows: Option<usize>,
    cols: Option<usize>,
}

async fn json() -> impl IntoResponse {
    let body = serde_json::to_vec(&Message { message: "Hello, World!" }).expect("serialisable");
    ([(header::CONTENT_TYPE, "application/json")], body)
}

async fn bigtable(Query(size): Query<TableSize>) -> Html<String> {
    let rows = size.rows.unwrap_or(1000).min(10_000);
    let cols = size.cols.unwrap_or(50).min(1_000);
    let page = html! {
        table {
            @for _ in 0..rows {
                tr { @for col in 1..=cols { td { (col) } } }
            }
        }
    };
    Html(page.into_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let static_dir = std::env::var("STATIC_DIR").unwrap_or_else(|_| "static".into());
    let app = Router::new()
        .route("/pong", get(|| async { "PONG" }))
        .route("/hello", get(|| async { "Hello World!" }))
        .route("/plaintext", get(|| async { "Hello, World!" }))
        .route("/json", get(json))
        .route("/bigtable", get(bigtable))
        .nest_service("/static", ServeDir::new(static_dir))
        .layer(axum::middleware::map_response(server_header));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    #[cfg(feature = "h2")]
    if let Some((cert, key)) = tls::from_env() {
        return tls::serve(listener, app, &cert, &key).await;
    }
    axum::serve(listener, app).await
}

async fn server_header(mut response: axum::response::Response) -> axum::response::Response {
    response.headers_mut().insert(header::SERVER, header::HeaderValue::from_static("axum"));
    response
}
