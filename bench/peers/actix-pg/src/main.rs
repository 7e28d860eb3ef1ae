//! actix-web 4 + tokio-postgres peer: the TechEmpower database endpoints of the kiln
//! benchmark contract (`/db`, `/queries`, `/fortunes`, `/updates`) on one worker.
//!
//! As in the TechEmpower actix entry: each worker opens one connection and prepares
//! its statements once; the N reads of a request are issued together, so they are
//! pipelined on that connection; the writes of `/updates` go in one statement.

use std::cell::Cell;

use actix_web::http::header::{ContentType, SERVER};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use futures_util::future::try_join_all;
use maud::{html, DOCTYPE};
use serde::Serialize;
use tokio_postgres::{Client, NoTls, Statement};

/// The most rows one request reads (TechEmpower's clamp).
const MAX_ROWS: usize = 500;
/// World ids and random numbers run from 1 to this.
const WORLD_ROWS: u64 = 10_000;
const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
/// Every new number of one `/updates` request in one statement.
const UPDATE_WORLDS: &str = "UPDATE world SET randomnumber = v.r \
     FROM unnest($1::int[], $2::int[]) AS v(id, r) WHERE world.id = v.id";

#[derive(Serialize, Clone, Copy)]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

struct Fortune {
    id: i32,
    message: String,
}

/// One worker's connection, its prepared statements and its random numbers.
struct Db {
    client: Client,
    world: Statement,
    fortunes: Statement,
    update: Statement,
    rng: Cell<u64>,
}

impl Db {
    async fn connect(url: &str) -> Result<Db, tokio_postgres::Error> {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
        actix_web::rt::spawn(async move {
            if let Err(e) = connection.await {
                eprintln!("peer-actix-pg: connection: {e}");
            }
        });
        let world = client.prepare(SELECT_WORLD).await?;
        let fortunes = client.prepare(SELECT_FORTUNES).await?;
        let update = client.prepare(UPDATE_WORLDS).await?;
        let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
        Ok(Db { client, world, fortunes, update, rng: Cell::new(seed) })
    }

    /// wyrand, reduced to `1..=WORLD_ROWS`.
    fn random(&self) -> i32 {
        let s = self.rng.get().wrapping_add(0xa076_1d64_78bd_642f);
        self.rng.set(s);
        let t = u128::from(s) * u128::from(s ^ 0xe703_7ed1_a0b4_28db);
        let r = (t as u64) ^ ((t >> 64) as u64);
        (((r >> 32) * WORLD_ROWS) >> 32) as i32 + 1
    }

    async fn world(&self, id: i32) -> Result<World, tokio_postgres::Error> {
        let row = self.client.query_one(&self.world, &[&id]).await?;
        Ok(World { id: row.get(0), random_number: row.get(1) })
    }

    /// Each id read with its own query, all issued at once (pipelined).
    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, tokio_postgres::Error> {
        try_join_all(ids.iter().map(|&id| self.world(id))).await
    }
}

/// TechEmpower's `queries` parameter: clamped to 1..=500, anything unparsable is 1.
fn count(query_string: &str) -> usize {
    let raw = query_string.split('&').find_map(|kv| kv.strip_prefix("queries=")).unwrap_or("");
    raw.trim().parse::<i64>().unwrap_or(1).clamp(1, MAX_ROWS as i64) as usize
}

fn json<T: Serialize>(value: &T) -> HttpResponse {
    let body = serde_json::to_vec(value).expect("serialisable");
    HttpResponse::Ok().insert_header((SERVER, "actix")).content_type(ContentType::json()).body(body)
}

fn failed(e: tokio_postgres::Error) -> HttpResponse {
    HttpResponse::InternalServerError().insert_header((SERVER, "actix")).body(format!("database error: {e}"))
}

async fn single_query(db: web::Data<Db>) -> HttpResponse {
    match db.world(db.random()).await {
        Ok(world) => json(&world),
        Err(e) => failed(e),
    }
}

async fn queries(req: HttpRequest, db: web::Data<Db>) -> HttpResponse {
    let ids: Vec<i32> = (0..count(req.query_string())).map(|_| db.random()).collect();
    match db.worlds(&ids).await {
        Ok(worlds) => json(&worlds),
        Err(e) => failed(e),
    }
}

async fn fortunes(db: web::Data<Db>) -> HttpResponse {
    let rows = match db.client.query(&db.fortunes, &[]).await {
        Ok(rows) => rows,
        Err(e) => return failed(e),
    };
    let mut fortunes: Vec<Fortune> = rows.iter().map(|r| Fortune { id: r.get(0), message: r.get(1) }).collect();
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
    HttpResponse::Ok().insert_header((SERVER, "actix")).content_type(ContentType::html()).body(page.into_string())
}

async fn updates(req: HttpRequest, db: web::Data<Db>) -> HttpResponse {
    let n = count(req.query_string());
    // Distinct ids, so that what the response shows is what the table holds afterwards.
    let mut ids: Vec<i32> = Vec::with_capacity(n);
    while ids.len() < n {
        let id = db.random();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut worlds = match db.worlds(&ids).await {
        Ok(worlds) => worlds,
        Err(e) => return failed(e),
    };
    for w in &mut worlds {
        w.random_number = db.random();
    }
    // Rows locked in id order cannot deadlock another request's update.
    let mut sorted = worlds.clone();
    sorted.sort_unstable_by_key(|w| w.id);
    let ids: Vec<i32> = sorted.iter().map(|w| w.id).collect();
    let numbers: Vec<i32> = sorted.iter().map(|w| w.random_number).collect();
    match db.client.execute(&db.update, &[&ids, &numbers]).await {
        Ok(_) => json(&worlds),
        Err(e) => failed(e),
    }
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| {
        "postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5432/hello_world".into()
    });
    HttpServer::new(move || {
        let url = url.clone();
        App::new()
            .data_factory(move || {
                let url = url.clone();
                async move { Db::connect(&url).await }
            })
            .route("/db", web::get().to(single_query))
            .route("/queries", web::get().to(queries))
            .route("/fortunes", web::get().to(fortunes))
            .route("/updates", web::get().to(updates))
    })
    .workers(1)
    .backlog(4096)
    .max_connections(100_000)
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
