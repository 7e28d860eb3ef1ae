//! actix-web + r2d2_sqlite peer: the wiki page of kiln's demo site (`GET /pages/{slug}`),
//! its Markdown rendered per request with pulldown-cmark and its comments read from
//! SQLite, on one worker, as an actix-web user would write it.
//!
//! `DATABASE_URL` is `sqlite://PATH`: the file kiln's run uses, or a new one, seeded
//! with the same pages and comments when the tables are missing.

#[path = "../../axum-wiki/src/csrf.rs"]
mod csrf;
mod db;
#[path = "../../axum-wiki/src/page.rs"]
mod page;
#[path = "../../axum-wiki/src/seed.rs"]
mod seed;

use std::path::Path;

use actix_web::http::header::{ContentType, COOKIE, SERVER, SET_COOKIE};
use actix_web::middleware::DefaultHeaders;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};

use csrf::CsrfKey;

async fn wiki_page(
    req: HttpRequest,
    pool: web::Data<db::Pool>,
    key: web::Data<CsrfKey>,
    slug: web::Path<String>,
) -> HttpResponse {
    let found = web::block(move || db::page(&pool, &slug)).await;
    match found {
        Ok(Ok(Some((page, comments)))) => {
            let csrf = key.token(req.headers().get(COOKIE).and_then(|v| v.to_str().ok()));
            let mut response = HttpResponse::Ok();
            response.content_type(ContentType::html());
            if let Some(set_cookie) = csrf.set_cookie {
                response.insert_header((SET_COOKIE, set_cookie));
            }
            response.body(page::render(&page, &comments, &csrf.token))
        }
        Ok(Ok(None)) => HttpResponse::NotFound().content_type(ContentType::plaintext()).body("no such page"),
        Ok(Err(e)) => HttpResponse::InternalServerError().body(format!("database error: {e}")),
        Err(e) => HttpResponse::InternalServerError().body(format!("blocking pool: {e}")),
    }
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let url = std::env::var("DATABASE_URL").map_err(|_| "DATABASE_URL must be set to sqlite://PATH")?;
    let path = url.strip_prefix("sqlite://").filter(|p| !p.is_empty()).ok_or("DATABASE_URL must be sqlite://PATH")?;
    // As many connections as kiln gives itself readers: one per core, at least 2, at most 4.
    let size = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4)) as u32;
    let pool = web::Data::new(db::open(Path::new(path), size)?);
    let key = web::Data::new(CsrfKey::generate());
    HttpServer::new(move || {
        App::new()
            .app_data(pool.clone())
            .app_data(key.clone())
            .wrap(DefaultHeaders::new().add((SERVER, "actix")))
            .route("/pages/{slug}", web::get().to(wiki_page))
    })
    .workers(1)
    .worker_max_blocking_threads(size as usize)
    .backlog(4096)
    .max_connections(100_000)
    .bind(("127.0.0.1", port))?
    .run()
    .await?;
    Ok(())
}
