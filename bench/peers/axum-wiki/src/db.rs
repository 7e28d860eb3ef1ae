//! The SQLite side: one writer and a few reader connections to the same file, each on its
//! own tokio-rusqlite thread, in WAL mode so readers never wait for the writer. A page
//! view is one call to a reader (the page, then its comments, with cached statements).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio_rusqlite::{rusqlite, Connection, OptionalExtension};

use crate::page::{Comment, Page};
use crate::seed::seed;

/// How long a connection waits for a lock held by another process (kiln, say) before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

// kiln's site's two statements (app/src/site/model.rs, docs/wiki-page.md), word for word.
const SELECT_PAGE: &str = "SELECT id, slug, title, body, created, updated FROM page WHERE slug = ?1";
const SELECT_COMMENTS: &str =
    "SELECT c.id, c.author, c.body, c.created FROM comment c JOIN page p ON p.id = c.page_id \
     WHERE p.slug = ?1 ORDER BY c.id";

pub type Error = tokio_rusqlite::Error;

pub struct Db {
    /// Kept open, as kiln keeps its writer: the peer's pool has the same shape as kiln's.
    _writer: Connection,
    readers: Vec<Connection>,
    next: AtomicUsize,
}

impl Db {
    /// Opens `path` (creating it if need be), seeds whatever tables are missing and
    /// opens `readers` reader connections beside the writer.
    pub async fn open(path: &Path, readers: usize) -> Result<Db, Error> {
        let writer = open_connection(path).await?;
        if writer.call(seed).await? {
            eprintln!("peer-axum-wiki: seeded {}", path.display());
        }
        let mut conns = Vec::with_capacity(readers);
        for _ in 0..readers.max(1) {
            conns.push(open_connection(path).await?);
        }
        Ok(Db { _writer: writer, readers: conns, next: AtomicUsize::new(0) })
    }

    fn reader(&self) -> &Connection {
        &self.readers[self.next.fetch_add(1, Ordering::Relaxed) % self.readers.len()]
    }

    /// The page named `slug` and its comments, oldest first; None if there is no such page.
    pub async fn page(&self, slug: String) -> Result<Option<(Page, Vec<Comment>)>, Error> {
        self.reader()
            .call(move |conn| {
                let mut select = conn.prepare_cached(SELECT_PAGE)?;
                let found = select
                    .query_row([&slug], |r| {
                        Ok(Page { slug: r.get(1)?, title: r.get(2)?, body: r.get(3)?, updated: r.get(5)? })
                    })
                    .optional()?;
                let Some(page) = found else { return Ok(None) };
                let mut select = conn.prepare_cached(SELECT_COMMENTS)?;
                let comments = select.query_map([&slug], comment_from)?.collect::<rusqlite::Result<_>>()?;
                Ok(Some((page, comments)))
            })
            .await
    }
}

async fn open_connection(path: &Path) -> Result<Connection, Error> {
    let conn = Connection::open(path).await?;
    conn.call(|conn| {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode is {mode}, not WAL")));
        }
        // In WAL mode NORMAL cannot corrupt the file on a crash, as kiln sets it.
        conn.pragma_update(None, "synchronous", "NORMAL")
    })
    .await?;
    Ok(conn)
}

fn comment_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Comment> {
    Ok(Comment { id: r.get(0)?, author: r.get(1)?, body: r.get(2)?, created: r.get(3)? })
}
