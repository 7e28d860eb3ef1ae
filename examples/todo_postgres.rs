//! The to-do list on PostgreSQL: `KILN_PG_URL=postgres://USER:PASS@HOST/DB cargo run
//! --example todo_postgres` (default `postgres://localhost/kiln`), then open
//! http://127.0.0.1:3000/. The same app as `todo_sqlite`; only the migrations differ.

#[path = "todo/app.rs"]
mod todo;

use kiln::db::{Database, Migration, Options};

/// The schema, embedded at compile time.
pub(crate) static MIGRATIONS: &[Migration] = kiln::db::migrations!("migrations/postgres");

/// Opens the database at `url` and brings its schema up to date.
pub(crate) fn open(url: &str) -> Result<Database, kiln::db::Error> {
    Database::open(url, Options::default().migrations(MIGRATIONS))
}

pub(crate) use todo::app;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let url = std::env::var("KILN_PG_URL").unwrap_or_else(|_| "postgres://localhost/kiln".to_owned());
    let database = open(&url)?;
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(database, kiln::Key::generate()), server)?.run_until_signal()?;
    Ok(())
}
