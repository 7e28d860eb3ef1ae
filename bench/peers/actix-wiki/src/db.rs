//! The SQLite side, as the actix-web guide does it: an r2d2 pool of rusqlite connections
//! (WAL, `synchronous=NORMAL`), each page view one blocking job on actix's thread pool
//! (`web::block`) that takes a connection and reads the page, then its comments, with
//! cached statements.

use std::path::Path;
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::OptionalExtension;

use crate::page::{Comment, Page};
use crate::seed::seed;

/// How long a connection waits for a lock held by another process (kiln, say) before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

// kiln's site's two statements (app/src/site/model.rs, docs/wiki-page.md), word for word.
const SELECT_PAGE: &str = "SELECT id, slug, title, body, created, updated FROM page WHERE slug = ?1";
const SELECT_COMMENTS: &str =
    "SELECT c.id, c.author, c.body, c.created FROM comment c JOIN page p ON p.id = c.page_id \
     WHERE p.slug = ?1 ORDER BY c.id";

pub type Pool = r2d2::Pool<SqliteConnectionManager>;

/// A pool of `size` connections to `path` (created if need be), the tables seeded where missing.
pub fn open(path: &Path, size: u32) -> Result<Pool, Box<dyn std::error::Error>> {
    let manager = SqliteConnectionManager::file(path).with_init(|conn| {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode is {mode}, not WAL")));
        }
        // In WAL mode NORMAL cannot corrupt the file on a crash, as kiln sets it.
        conn.pragma_update(None, "synchronous", "NORMAL")
    });
    let pool = r2d2::Pool::builder().max_size(size).min_idle(Some(size)).build(manager)?;
    if seed(&mut *pool.get()?)? {
        eprintln!("peer-actix-wiki: seeded {}", path.display());
    }
    Ok(pool)
}

/// The failures of a page view's job.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The page named `slug` and its comments, oldest first; None if there is no such page.
/// Blocking: run it on the thread pool.
pub fn page(pool: &Pool, slug: &str) -> Result<Option<(Page, Vec<Comment>)>, Error> {
    let conn = pool.get()?;
    let mut select = conn.prepare_cached(SELECT_PAGE)?;
    let found = select
        .query_row([slug], |r| Ok(Page { slug: r.get(1)?, title: r.get(2)?, body: r.get(3)?, updated: r.get(5)? }))
        .optional()?;
    let Some(page) = found else { return Ok(None) };
    let mut select = conn.prepare_cached(SELECT_COMMENTS)?;
    let comments = select.query_map([slug], comment_from)?.collect::<rusqlite::Result<_>>()?;
    Ok(Some((page, comments)))
}

fn comment_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Comment> {
    Ok(Comment { id: r.get(0)?, author: r.get(1)?, body: r.get(2)?, created: r.get(3)? })
}
