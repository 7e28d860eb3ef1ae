//! A to-do list on embedded SQLite: `cargo run --example todo_sqlite`, then open
//! http://127.0.0.1:3000/. The database is `todo.sqlite` in the current folder.

#[path = "todo/app.rs"]
mod todo;

use kiln::db::{Database, Migration, Options};

/// The schema, embedded at compile time.
pub(crate) static MIGRATIONS: &[Migration] = kiln::db::migrations!("migrations/sqlite");

/// Opens the database at `url` and brings its schema up to date.
pub(crate) fn open(url: &str) -> Result<Database, kiln::db::Error> {
    Database::open(url, Options::default().migrations(MIGRATIONS))
}

pub(crate) use todo::app;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let database = open("sqlite://todo.sqlite")?;
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(database, kiln::Key::generate()), server)?.run_until_signal()?;
    Ok(())
}
