//! xitca-http + xitca-postgres peer: the TechEmpower database endpoints of the kiln
//! benchmark contract (`/db`, `/queries`, `/fortunes`, `/updates`) on one worker.
//!
//! The stack of the TechEmpower xitca-web entry: xitca-server and xitca-http (the layer
//! under xitca-web; xitca-postgres 0.4 shares its xitca-io 0.5 with xitca-http 0.8, and no
//! xitca-web release does) with xitca-postgres. As there, the worker opens one connection
//! and prepares its statements once; a query is written to the connection when it is
//! issued, so the N reads of a request, issued before any is awaited, are pipelined on that
//! connection. Unlike the TechEmpower entry, `/updates` sends its one UPDATE after the reads
//! have come back, as actix-pg does, so that both peers do the same work.

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::error::Error;
use std::future::IntoFuture;

use maud::{html, DOCTYPE};
use serde::Serialize;
use xitca_http::bytes::{BufMut, Bytes, BytesMut};
use xitca_http::body::Once;
use xitca_http::h1::RequestBody;
use xitca_http::http::const_header_value::{JSON, TEXT_HTML_UTF8, TEXT_UTF8};
use xitca_http::http::header::{HeaderValue, CONTENT_TYPE, SERVER};
use xitca_http::http::{self, IntoResponse, Method, RequestExt, StatusCode};
use xitca_http::util::middleware::context::{Context, ContextBuilder};
use xitca_http::HttpServiceBuilder;
use xitca_postgres::iter::AsyncLendingIterator;
use xitca_postgres::statement::Statement;
use xitca_postgres::types::Type;
use xitca_postgres::{Client, Execute, Postgres};
use xitca_service::{fn_service, ServiceExt};

type Request = http::Request<RequestExt<RequestBody>>;
type Response = http::Response<Once<Bytes>>;
type Ctx<'a> = Context<'a, Request, Db>;
type DbResult<T> = Result<T, Box<dyn Error>>;

/// The most rows one request reads (TechEmpower's clamp).
const MAX_ROWS: usize = 500;
/// World ids and random numbers run from 1 to this.
const WORLD_ROWS: u64 = 10_000;
const ADDED_FORTUNE: &str = "Additional fortune added at request time.";
const SERVER_NAME: HeaderValue = HeaderValue::from_static("xitca");

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

/// One worker's connection, its prepared statements, its random numbers and a reusable
/// buffer for JSON bodies.
struct Db {
    client: Client,
    world: Statement,
    fortunes: Statement,
    update: Statement,
    rng: Cell<u64>,
    buf: RefCell<BytesMut>,
}

impl Db {
    async fn connect(url: String) -> Result<Db, xitca_postgres::Error> {
        let (client, driver) = Postgres::new(url).connect().await?;
        tokio::task::spawn_local(async move {
            if let Err(e) = driver.into_future().await {
                eprintln!("peer-xitca-pg: connection: {e}");
            }
        });
        // Prepared once for the connection's life: leaked from their drop guards.
        let world = Statement::named(SELECT_WORLD, &[Type::INT4]).execute(&client).await?.leak();
        let fortunes = Statement::named(SELECT_FORTUNES, &[]).execute(&client).await?.leak();
        let update =
            Statement::named(UPDATE_WORLDS, &[Type::INT4_ARRAY, Type::INT4_ARRAY]).execute(&client).await?.leak();
        let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
        Ok(Db { client, world, fortunes, update, rng: Cell::new(seed), buf: RefCell::new(BytesMut::new()) })
    }

    /// wyrand, reduced to `1..=WORLD_ROWS`.
    fn random(&self) -> i32 {
        let s = self.rng.get().wrapping_add(0xa076_1d64_78bd_642f);
        self.rng.set(s);
        let t = u128::from(s) * u128::from(s ^ 0xe703_7ed1_a0b4_28db);
        let r = (t as u64) ^ ((t >> 64) as u64);
        (((r >> 32) * WORLD_ROWS) >> 32) as i32 + 1
    }

    async fn world(&self, id: i32) -> DbResult<World> {
        let mut rows = self.world.bind([id]).query(&self.client).await?;
        let row = rows.try_next().await?.ok_or("no such World row")?;
        Ok(World { id: row.get(0), random_number: row.get(1) })
    }

    /// Each id read with its own query; every query is written to the connection before
    /// the first answer is awaited, so they go out pipelined.
    async fn worlds(&self, ids: &[i32]) -> DbResult<Vec<World>> {
        let pending: Vec<_> = ids.iter().map(|&id| self.world.bind([id]).query(&self.client)).collect();
        let mut worlds = Vec::with_capacity(ids.len());
        for answer in pending {
            let mut rows = answer.await?;
            let row = rows.try_next().await?.ok_or("no such World row")?;
            worlds.push(World { id: row.get(0), random_number: row.get(1) });
        }
        Ok(worlds)
    }

    async fn fortunes(&self) -> DbResult<Vec<Fortune>> {
        let mut fortunes = Vec::with_capacity(16);
        let mut rows = self.fortunes.query(&self.client).await?;
        while let Some(row) = rows.try_next().await? {
            fortunes.push(Fortune { id: row.get(0), message: row.get(1) });
        }
        Ok(fortunes)
    }

    async fn updates(&self, n: usize) -> DbResult<Vec<World>> {
        // Distinct ids, so that what the response shows is what the table holds afterwards.
        let mut ids: Vec<i32> = Vec::with_capacity(n);
        while ids.len() < n {
            let id = self.random();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let worlds: Vec<World> = ids.iter().map(|&id| World { id, random_number: self.random() }).collect();
        // As the TechEmpower xitca entry does: the reads and the update are all written
        // before any answer is awaited, so a request costs one round trip.
        let reads: Vec<_> = ids.iter().map(|&id| self.world.bind([id]).query(&self.client)).collect();
        // Rows locked in id order cannot deadlock another request's update.
        let mut sorted = worlds.clone();
        sorted.sort_unstable_by_key(|w| w.id);
        let ids: Vec<i32> = sorted.iter().map(|w| w.id).collect();
        let numbers: Vec<i32> = sorted.iter().map(|w| w.random_number).collect();
        let update = self.update.bind([&ids, &numbers]).execute(&self.client);
        for read in reads {
            let mut rows = read.await?;
            rows.try_next().await?.ok_or("no such World row")?;
        }
        update.await?;
        Ok(worlds)
    }
}

/// TechEmpower's `queries` parameter: clamped to 1..=500, anything unparsable is 1.
fn count(query_string: &str) -> usize {
    let raw = query_string.split('&').find_map(|kv| kv.strip_prefix("queries=")).unwrap_or("");
    raw.trim().parse::<i64>().unwrap_or(1).clamp(1, MAX_ROWS as i64) as usize
}

fn respond(req: Request, status: StatusCode, content_type: HeaderValue, body: Bytes) -> Response {
    let mut res = req.into_response(body);
    *res.status_mut() = status;
    res.headers_mut().insert(SERVER, SERVER_NAME);
    res.headers_mut().insert(CONTENT_TYPE, content_type);
    res
}

/// Serialised into the worker's reusable buffer, as the TechEmpower entry does.
fn json_body<T: Serialize + ?Sized>(db: &Db, value: &T) -> Bytes {
    let mut buf = db.buf.borrow_mut();
    serde_json::to_writer((&mut *buf).writer(), value).expect("serialisable");
    buf.split().freeze()
}

fn fortunes_page(mut fortunes: Vec<Fortune>) -> Bytes {
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
    Bytes::from(page.into_string())
}

enum Route {
    Db,
    Queries(usize),
    Fortunes,
    Updates(usize),
}

async fn handle(ctx: Ctx<'_>) -> Result<Response, Infallible> {
    let (req, db) = ctx.into_parts();
    let query = req.uri().query().unwrap_or("");
    let route = match req.uri().path() {
        "/db" => Route::Db,
        "/queries" => Route::Queries(count(query)),
        "/fortunes" => Route::Fortunes,
        "/updates" => Route::Updates(count(query)),
        _ => return Ok(respond(req, StatusCode::NOT_FOUND, TEXT_UTF8, Bytes::from_static(b"not found"))),
    };
    if req.method() != Method::GET {
        return Ok(respond(req, StatusCode::METHOD_NOT_ALLOWED, TEXT_UTF8, Bytes::new()));
    }
    let outcome: DbResult<(HeaderValue, Bytes)> = match route {
        Route::Db => db.world(db.random()).await.map(|w| (JSON, json_body(db, &w))),
        Route::Queries(n) => {
            let ids: Vec<i32> = (0..n).map(|_| db.random()).collect();
            db.worlds(&ids).await.map(|worlds| (JSON, json_body(db, &worlds)))
        }
        Route::Fortunes => db.fortunes().await.map(|fortunes| (TEXT_HTML_UTF8, fortunes_page(fortunes))),
        Route::Updates(n) => db.updates(n).await.map(|worlds| (JSON, json_body(db, &worlds))),
    };
    Ok(match outcome {
        Ok((content_type, body)) => respond(req, StatusCode::OK, content_type, body),
        Err(e) => {
            eprintln!("peer-xitca-pg: {e}");
            respond(req, StatusCode::INTERNAL_SERVER_ERROR, TEXT_UTF8, Bytes::from(format!("database error: {e}")))
        }
    })
}

fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| {
        "postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5432/hello_world".into()
    });
    let service = fn_service(handle)
        .enclosed(ContextBuilder::new(move || Db::connect(url.clone())))
        .enclosed(HttpServiceBuilder::h1());
    xitca_server::Builder::new()
        .server_threads(1)
        .worker_threads(1)
        .backlog(4096)
        .shutdown_timeout(1)
        .bind("xitca-pg", ("127.0.0.1", port), service)?
        .build()
        .wait()
}
