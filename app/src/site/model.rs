//! The site's rows and the statements that read and write them, the same SQL on
//! SQLite and PostgreSQL.

use kiln::db::{Db, Error, FromRow};

/// A page as listed: no body.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct PageEntry {
    pub(crate) slug: String,
    pub(crate) title: String,
    /// Unix seconds.
    pub(crate) created: i64,
    pub(crate) updated: i64,
}

/// A whole page.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct Page {
    pub(crate) id: i64,
    pub(crate) slug: String,
    pub(crate) title: String,
    /// Markdown.
    pub(crate) body: String,
    pub(crate) created: i64,
    pub(crate) updated: i64,
}

/// A comment, shown as text.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct Comment {
    pub(crate) id: i64,
    pub(crate) author: String,
    pub(crate) body: String,
    pub(crate) created: i64,
}

/// What a page is written from: the editor's form, or the seed.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageDraft {
    pub(crate) slug: String,
    pub(crate) title: String,
    pub(crate) body: String,
}

/// `limit` pages from the `offset`th, newest first.
pub(crate) async fn newest(db: &Db, limit: i64, offset: i64) -> Result<Vec<PageEntry>, Error> {
    db.query_all(
        "SELECT slug, title, created, updated FROM page ORDER BY created DESC, id DESC LIMIT $1 OFFSET $2",
        &[&limit, &offset],
    )
    .await
}

/// How many pages there are.
pub(crate) async fn count(db: &Db) -> Result<i64, Error> {
    let (n,): (i64,) = db.query_one("SELECT count(*) FROM page", &[]).await?;
    Ok(n)
}

/// The page at `slug`; `Error::NotFound` when there is none.
pub(crate) async fn page(db: &Db, slug: &str) -> Result<Page, Error> {
    db.query_one("SELECT id, slug, title, body, created, updated FROM page WHERE slug = $1", &[&slug]).await
}

/// The `limit` newest whole pages, for the feed.
pub(crate) async fn newest_pages(db: &Db, limit: i64) -> Result<Vec<Page>, Error> {
    db.query_all(
        "SELECT id, slug, title, body, created, updated FROM page ORDER BY created DESC, id DESC LIMIT $1",
        &[&limit],
    )
    .await
}

/// The newest `updated` of all pages, an edit included; `None` without pages.
pub(crate) async fn last_updated(db: &Db) -> Result<Option<i64>, Error> {
    let (updated,): (Option<i64>,) = db.query_one("SELECT max(updated) FROM page", &[]).await?;
    Ok(updated)
}

/// At most `limit` pages whose title or text holds `text`, in any ASCII case, newest
/// first. `%`, `_` and a backslash in `text` are matched as themselves.
pub(crate) async fn search(db: &Db, text: &str, limit: i64) -> Result<Vec<PageEntry>, Error> {
    let mut pattern = String::from("%");
    for c in text.to_ascii_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    db.query_all(
        "SELECT slug, title, created, updated FROM page \
         WHERE lower(title) LIKE $1 ESCAPE '\\' OR lower(body) LIKE $1 ESCAPE '\\' \
         ORDER BY created DESC, id DESC LIMIT $2",
        &[&pattern, &limit],
    )
    .await
}

/// Whether there is a page at `slug`.
pub(crate) async fn page_exists(db: &Db, slug: &str) -> Result<bool, Error> {
    let (n,): (i64,) = db.query_one("SELECT count(*) FROM page WHERE slug = $1", &[&slug]).await?;
    Ok(n > 0)
}

/// The comments of the page at `slug`, oldest first; asked beside [`page`], not after it.
pub(crate) async fn comments_of(db: &Db, slug: &str) -> Result<Vec<Comment>, Error> {
    db.query_all(
        "SELECT c.id, c.author, c.body, c.created FROM comment c JOIN page p ON p.id = c.page_id \
         WHERE p.slug = $1 ORDER BY c.id",
        &[&slug],
    )
    .await
}

/// Stores a comment.
pub(crate) async fn add_comment(db: &Db, page_id: i64, author: &str, body: &str, now: i64) -> Result<i64, Error> {
    db.insert(
        "INSERT INTO comment (page_id, author, body, created) VALUES ($1, $2, $3, $4)",
        &[&page_id, &author, &body, &now],
    )
    .await
}

/// Stores a new page; a slug already taken is `Error::Conflict`.
pub(crate) async fn create_page(db: &Db, draft: &PageDraft, now: i64) -> Result<i64, Error> {
    db.insert(
        "INSERT INTO page (slug, title, body, created, updated) VALUES ($1, $2, $3, $4, $4)",
        &[&draft.slug, &draft.title, &draft.body, &now],
    )
    .await
}

/// Changes the title and body of the page at `slug`; `Error::NotFound` when there is none.
pub(crate) async fn update_page(db: &Db, slug: &str, draft: &PageDraft, now: i64) -> Result<(), Error> {
    let changed = db
        .execute(
            "UPDATE page SET title = $2, body = $3, updated = $4 WHERE slug = $1",
            &[&slug, &draft.title, &draft.body, &now],
        )
        .await?;
    if changed == 0 { Err(Error::NotFound) } else { Ok(()) }
}

/// The Unix millisecond before which the editor's sessions are over (0 until a logout).
pub(crate) async fn sessions_ended(db: &Db) -> Result<i64, Error> {
    let (ended,): (i64,) = db.query_one("SELECT ended FROM session_end WHERE id = 1", &[]).await?;
    Ok(ended)
}

/// Ends the editor's sessions started before the Unix millisecond `before`. The line only
/// moves forward: a clock set back must not bring ended sessions back.
pub(crate) async fn end_sessions(db: &Db, before: i64) -> Result<(), Error> {
    db.execute("UPDATE session_end SET ended = $1 WHERE id = 1 AND ended < $1", &[&before]).await?;
    Ok(())
}

/// The current time in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}
