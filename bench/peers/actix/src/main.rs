//! actix-web 4 peer: the kiln benchmark contract on one worker.

use actix_web::http::header::ContentType;
use actix_web::{web, App, HttpResponse, HttpServer};
use maud::html;
use serde::{Deserialize, Serialize};

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Deserialize)]
struct TableSize {
    rows: Option<usize>,
    cols: Option<usize>,
}

async fn pong() -> HttpResponse {
    HttpResponse::Ok().content_type(ContentType::plaintext()).body("PONG")
}

async fn hello() -> HttpResponse {
    HttpResponse::Ok().content_type(ContentType::plaintext()).body("Hello World!")
}

async fn plaintext() -> HttpResponse {
    HttpResponse::Ok().content_type(ContentType::plaintext()).body("Hello, World!")
}

async fn json() -> HttpResponse {
    let body = serde_json::to_vec(&Message { message: "Hello, World!" }).expect("serialisable");
    HttpResponse::Ok().content_type(ContentType::json()).body(body)
}

/// Yesod's bigtable, rendered per request with maud (the "actix-web + maud" entry).
async fn bigtable(size: web::Query<TableSize>) -> HttpResponse {
    let rows = size.rows.unwrap_or(1000).min(10_000);
    let cols = size.cols.unwrap_or(50).min(1_000);
    let page = html! {
        table {
            @for _ in 0..rows {
                tr { @for col in 1..=cols { td { (col) } } }
            }
        }
    };
    HttpResponse::Ok().content_type(ContentType::html()).body(page.into_string())
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let static_dir = std::env::var("STATIC_DIR").unwrap_or_else(|_| "static".into());
    HttpServer::new(move || {
        App::new()
            .route("/pong", web::get().to(pong))
            .route("/hello", web::get().to(hello))
            .route("/plaintext", web::get().to(plaintext))
            .route("/json", web::get().to(json))
            .route("/bigtable", web::get().to(bigtable))
            .service(actix_files::Files::new("/static", &static_dir))
    })
    .workers(1)
    .backlog(4096)
    .max_connections(100_000)
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
