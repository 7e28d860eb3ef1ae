//! axum + tokio-rusqlite peer: the wiki page of kiln's demo site (`GET /pages/{slug}`),
//! its Markdown rendered per request with pulldown-cmark and its comments read from
//! SQLite, served by a current-thread tokio runtime (one worker), as an axum user would
//! write it.
//!
//! `DATABASE_URL` is `sqlite://PATH`: the file kiln's run uses, or a new one, seeded
//! with the same pages and comments when the tables are missing.

mod csrf;
mod db;
mod page;
mod seed;
#[cfg(feature = "tls")]
#[path = "../../axum/src/tls.rs"]
mod tls;

use std::path::Path;
use std::sync::Arc;

use axum::extract::{Path as UrlPath, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use csrf::CsrfKey;
use db::Db;

/// What every request shares.
struct Site {
    db: Db,
    csrf: CsrfKey,
}

/// A failed database call, answered with 500 and the driver's message.
struct DbFailure(db::Error);

impl From<db::Error> for DbFailure {
    fn from(e: db::Error) -> Self {
        DbFailure(e)
    }
}

impl IntoResponse for DbFailure {
    fn into_response(self) -> Response {
        (StatusCode::INTERNAL_SERVER_ERROR, format!("database error: {}", self.0)).into_response()
    }
}

async fn wiki_page(
    State(site): State<Arc<Site>>,
    UrlPath(slug): UrlPath<String>,
    headers: HeaderMap,
) -> Result<Response, DbFailure> {
    let Some((page, comments)) = site.db.page(slug).await? else {
        return Ok((StatusCode::NOT_FOUND, "no such page").into_response());
    };
    let cookie = headers.get(header::COOKIE).and_then(|v| v.to_str().ok());
    let csrf = site.csrf.token(cookie);
    let mut response = Html(page::render(&page, &comments, &csrf.token)).into_response();
    if let Some(set_cookie) = csrf.set_cookie.and_then(|c| HeaderValue::try_from(c).ok()) {
        response.headers_mut().insert(header::SET_COOKIE, set_cookie);
    }
    Ok(response)
}

async fn server_header(mut response: Response) -> Response {
    response.headers_mut().insert(header::SERVER, HeaderValue::from_static("axum"));
    response
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let url = std::env::var("DATABASE_URL").map_err(|_| "DATABASE_URL must be set to sqlite://PATH")?;
    let path = url.strip_prefix("sqlite://").filter(|p| !p.is_empty()).ok_or("DATABASE_URL must be sqlite://PATH")?;
    // As many readers as kiln gives itself: one per core, at least 2, at most 4.
    let readers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    let site = Arc::new(Site { db: Db::open(Path::new(path), readers).await?, csrf: CsrfKey::generate() });
    let app = Router::new()
        .route("/pages/{slug}", get(wiki_page))
        .layer(axum::middleware::map_response(server_header))
        .with_state(site);
    // kiln's default levels (Compression's `Levels`: gzip 4, brotli 4), so that both
    // send about the same bytes and the CPU compares like with like.
    #[cfg(feature = "compression")]
    let app = app.layer(
        tower_http::compression::CompressionLayer::new().quality(tower_http::compression::CompressionLevel::Precise(4)),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    #[cfg(feature = "tls")]
    if let Some((cert, key)) = tls::from_env() {
        tls::serve(listener, app, &cert, &key).await?;
        return Ok(());
    }
    axum::serve(listener, app).await?;
    Ok(())
}
