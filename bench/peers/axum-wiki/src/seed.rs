//! kiln's site tables, created and filled only where missing (the file is usually kiln's
//! own, already migrated and seeded): the same pages from the same Markdown files in the
//! repository, the same comments. actix-wiki shares this file.

use rusqlite::{params, Connection, TransactionBehavior};

/// kiln's site schema (app/migrations/0002*), created only where missing.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS pages (
        id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
        body TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
     CREATE TABLE IF NOT EXISTS comments (
        id INTEGER PRIMARY KEY, page_id INTEGER NOT NULL REFERENCES pages (id),
        author TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL);";

/// The long page, read from the repository when the peer is built.
const LONG_PAGE: &str = "# TODO";

/// Creates and fills the tables that are missing or empty; whether it did anything.
pub fn seed(conn: &mut Connection) -> rusqlite::Result<bool> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(SCHEMA)?;
    let empty: bool = tx.query_row("SELECT NOT EXISTS (SELECT 1 FROM page)", [], |r| r.get(0))?;
    if empty {
        tx.execute(
            "INSERT INTO page (slug, title, body, created, updated) VALUES (?1, ?2, ?3, ?4, ?4)",
            params!["long", "Long", LONG_PAGE, 0],
        )?;
    }
    tx.commit()?;
    Ok(empty)
}
