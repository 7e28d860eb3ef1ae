//! axum + tokio-rusqlite peer: the TechEmpower database endpoints of the kiln benchmark
//! contract (`/db`, `/queries`, `/fortunes`, `/updates`) on SQLite, served by a
//! current-thread tokio runtime (one worker), as an axum user would write them.
//!
//! `DATABASE_URL` is `sqlite://PATH`: the file kiln's run uses, or a new one, seeded
//! with the same tables when they are missing.

mod db;

use std::path::Path;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use maud::{html, DOCTYPE};
use rand::Rng;
use serde::Deserialize;

use db::{Db, Fortune, World, WORLD_ROWS};

/// The most rows one request reads (TechEmpower's clamp).
const MAX_ROWS: usize = 500;
const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

/// TechEmpower's `queries` parameter: clamped to 1..=500, anything unparsable is 1.
#[derive(Deserialize)]
struct Count {
    queries: Option<String>,
}

impl Count {
    fn get(&self) -> usize {
        let n = self.queries.as_deref().and_then(|q| q.trim().parse::<i64>().ok()).unwrap_or(1);
        n.clamp(1, MAX_ROWS as i64) as usize
    }
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

fn random_id() -> i32 {
    rand::rng().random_range(1..=WORLD_ROWS)
}

async fn single_query(State(db): State<Arc<Db>>) -> Result<Json<World>, DbFailure> {
    let mut worlds = db.worlds(vec![random_id()]).await?;
    Ok(Json(worlds.remove(0)))
}

async fn queries(State(db): State<Arc<Db>>, Query(count): Query<Count>) -> Result<Json<Vec<World>>, DbFailure> {
    let ids = (0..count.get()).map(|_| random_id()).collect();
    Ok(Json(db.worlds(ids).await?))
}

async fn fortunes(State(db): State<Arc<Db>>) -> Result<Html<String>, DbFailure> {
    let mut fortunes = db.fortunes().await?;
    fortunes.push(Fortune { id: 0, message: ADDED_FORTUNE.to_owned() });
    fortunes.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    let page = html! {
        (DOCTYPE)
        html {
            head { title { "Fortunes" } }
            body {
                table {
                    tr { th { "id" } th { "message" } }
                    @for f in &fortunes { tr { td { (f.id) } td { (f.message) } } }
                }
            }
        }
    };
    Ok(Html(page.into_string()))
}

async fn updates(State(db): State<Arc<Db>>, Query(count): Query<Count>) -> Result<Json<Vec<World>>, DbFailure> {
    // Distinct ids, so that what the response shows is what the table holds afterwards.
    let worlds = {
        let mut rng = rand::rng();
        let ids = rand::seq::index::sample(&mut rng, WORLD_ROWS as usize, count.get());
        ids.into_iter().map(|i| World { id: i as i32 + 1, random_number: rng.random_range(1..=WORLD_ROWS) }).collect()
    };
    Ok(Json(db.update(worlds).await?))
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
    let db = Arc::new(Db::open(Path::new(path), readers).await?);
    let app = Router::new()
        .route("/db", get(single_query))
        .route("/queries", get(queries))
        .route("/fortunes", get(fortunes))
        .route("/updates", get(updates))
        .layer(axum::middleware::map_response(server_header))
        .with_state(db);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    axum::serve(listener, app).await?;
    Ok(())
}
