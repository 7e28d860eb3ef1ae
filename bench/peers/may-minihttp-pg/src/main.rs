//! may-minihttp + may_postgres peer: the TechEmpower database endpoints of the kiln
//! benchmark contract (`/db`, `/queries`, `/fortunes`, `/updates`) on one may worker.
//! (may-minihttp writes the Server, Date and Content-Length headers itself.)
//!
//! As in the TechEmpower may-minihttp entry: one connection, statements prepared once
//! (one update statement per row count, 1..=500); the N reads of a request are all
//! sent before the first answer is read, so they are pipelined; the writes of
//! `/updates` go in one statement.

use std::fmt::Write as _;
use std::io;
use std::sync::Arc;

use bytes::BufMut;
use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};
use may_postgres::types::ToSql;
use may_postgres::{Client, Statement};
use maud::{html, DOCTYPE};
use serde::Serialize;

const MAX_ROWS: usize = 500;
const WORLD_ROWS: u64 = 10_000;
const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

#[derive(Serialize, Clone, Copy)]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

struct Statements {
    world: Statement,
    fortunes: Statement,
    /// `updates[n - 1]` writes n rows.
    updates: Vec<Statement>,
}

#[derive(Clone)]
struct Db {
    client: Client,
    statements: Arc<Statements>,
}

/// `UPDATE world SET randomnumber = CASE id WHEN $1 THEN $2 ... END WHERE id IN (...)` for n rows.
fn update_sql(n: usize) -> String {
    let mut q = String::from("UPDATE world SET randomnumber = CASE id ");
    for i in 0..n {
        let _ = write!(q, "WHEN ${} THEN ${} ", 2 * i + 1, 2 * i + 2);
    }
    q.push_str("ELSE randomnumber END WHERE id IN (");
    for i in 0..n {
        let _ = write!(q, "{}${}", if i == 0 { "" } else { "," }, 2 * n + i + 1);
    }
    q.push(')');
    q
}

impl Db {
    fn connect(url: &str) -> Db {
        let client = may_postgres::connect(url).expect("connect to PostgreSQL");
        let world = client.prepare("SELECT id, randomnumber FROM world WHERE id = $1").expect("prepare");
        let fortunes = client.prepare("SELECT id, message FROM fortune").expect("prepare");
        let updates = (1..=MAX_ROWS).map(|n| client.prepare(&update_sql(n)).expect("prepare")).collect();
        Db { client, statements: Arc::new(Statements { world, fortunes, updates }) }
    }

    /// Sends every read before reading the first answer: one pipelined batch.
    fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, may_postgres::Error> {
        let mut pending = Vec::with_capacity(ids.len());
        for id in ids {
            pending.push(self.client.query_raw(&self.statements.world, &[id])?);
        }
        let mut worlds = Vec::with_capacity(ids.len());
        for mut rows in pending {
            let row = rows.next().transpose()?.expect("a world row");
            worlds.push(World { id: row.get(0), random_number: row.get(1) });
        }
        Ok(worlds)
    }

    fn update(&self, worlds: &[World]) -> Result<(), may_postgres::Error> {
        let mut params: Vec<&dyn ToSql> = Vec::with_capacity(worlds.len() * 3);
        for w in worlds {
            params.push(&w.id);
            params.push(&w.random_number);
        }
        for w in worlds {
            params.push(&w.id);
        }
        self.client.execute(&self.statements.updates[worlds.len() - 1], &params)?;
        Ok(())
    }

    fn fortunes(&self) -> Result<Vec<(i32, String)>, may_postgres::Error> {
        let mut fortunes = Vec::with_capacity(13);
        for row in self.client.query_raw(&self.statements.fortunes, &[])? {
            let row = row?;
            fortunes.push((row.get(0), row.get(1)));
        }
        Ok(fortunes)
    }
}

/// TechEmpower's `queries` parameter: clamped to 1..=500, anything unparsable is 1.
fn count(path: &str) -> usize {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    let raw = query.split('&').find_map(|kv| kv.strip_prefix("queries=")).unwrap_or("");
    raw.trim().parse::<i64>().unwrap_or(1).clamp(1, MAX_ROWS as i64) as usize
}

struct Peer {
    db: Db,
    rng: u64,
}

impl Peer {
    /// wyrand, reduced to `1..=WORLD_ROWS`.
    fn random(&mut self) -> i32 {
        self.rng = self.rng.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.rng) * u128::from(self.rng ^ 0xe703_7ed1_a0b4_28db);
        let r = (t as u64) ^ ((t >> 64) as u64);
        (((r >> 32) * WORLD_ROWS) >> 32) as i32 + 1
    }

    fn json<T: Serialize>(rsp: &mut Response, value: &T) -> io::Result<()> {
        rsp.header("Content-Type: application/json");
        serde_json::to_writer(rsp.body_mut().writer(), value)?;
        Ok(())
    }
}

fn db_error(e: may_postgres::Error) -> io::Error {
    io::Error::new(io::ErrorKind::Other, format!("database error: {e}"))
}

impl HttpService for Peer {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        let path = req.path();
        let route = path.split_once('?').map_or(path, |(p, _)| p);
        match route {
            "/db" => {
                let id = self.random();
                let world = self.db.worlds(&[id]).map_err(db_error)?;
                Self::json(rsp, &world[0])?;
            }
            "/queries" => {
                let ids: Vec<i32> = (0..count(path)).map(|_| self.random()).collect();
                let worlds = self.db.worlds(&ids).map_err(db_error)?;
                Self::json(rsp, &worlds)?;
            }
            "/updates" => {
                let n = count(path);
                let mut ids: Vec<i32> = Vec::with_capacity(n);
                while ids.len() < n {
                    let id = self.random();
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
                let mut worlds = self.db.worlds(&ids).map_err(db_error)?;
                for w in &mut worlds {
                    w.random_number = self.random();
                }
                self.db.update(&worlds).map_err(db_error)?;
                Self::json(rsp, &worlds)?;
            }
            "/fortunes" => {
                let mut fortunes = self.db.fortunes().map_err(db_error)?;
                fortunes.push((0, ADDED_FORTUNE.to_owned()));
                fortunes.sort_unstable_by(|a, b| a.1.cmp(&b.1));
                let page = html! {
                    (DOCTYPE)
                    html {
                        head { title { "Fortunes" } }
                        body {
                            table {
                                tr { th { "id" } th { "message" } }
                                @for (id, message) in &fortunes { tr { td { (id) } td { (message) } } }
                            }
                        }
                    }
                };
                rsp.header("Content-Type: text/html; charset=utf-8");
                rsp.body_mut().put_slice(page.into_string().as_bytes());
            }
            _ => {
                rsp.status_code(404, "Not Found");
            }
        }
        Ok(())
    }
}

struct Factory {
    db: Db,
}

impl HttpServiceFactory for Factory {
    type Service = Peer;

    fn new_service(&self, id: usize) -> Self::Service {
        Peer { db: self.db.clone(), rng: 0x9e37_79b9_7f4a_7c15 ^ (id as u64 + 1) }
    }
}

fn main() {
    may::config().set_workers(1).set_pool_capacity(1000).set_stack_size(0x1000);
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5432/hello_world".into());
    // One connection for the one worker, opened on a coroutine as may_postgres expects.
    let db = may::go!(move || Db::connect(&url)).join().expect("database connection");
    let server = Factory { db }.start(("127.0.0.1", port)).expect("bind");
    server.wait();
}
