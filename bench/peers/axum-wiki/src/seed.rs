//! kiln's site tables, created and filled only where missing (the file is usually kiln's
//! own, already migrated and seeded): the schema of app/migrations/sqlite/0002_site.sql,
//! the pages from the same Markdown files in the repository (read when the peer is
//! built) and the same comments and times as app/src/site/seed.rs, so a peer-seeded
//! file holds the same bytes as a kiln-seeded one (bench/tests/test_wiki_peers.py checks
//! that the two lists agree). actix-wiki shares this file.

use rusqlite::{params, Connection, TransactionBehavior};

/// The site's schema, created only where missing.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS page (
        id INTEGER PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        created BIGINT NOT NULL,
        updated BIGINT NOT NULL
     );
     CREATE INDEX IF NOT EXISTS page_newest ON page (created DESC, id DESC);
     CREATE TABLE IF NOT EXISTS comment (
        id INTEGER PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES page (id) ON DELETE CASCADE,
        author TEXT NOT NULL,
        body TEXT NOT NULL,
        created BIGINT NOT NULL
     );
     CREATE INDEX IF NOT EXISTS comment_of_page ON comment (page_id, id);";

/// The slug of the long page the `wiki` workload reads.
const LONG_PAGE: &str = "tour";
/// When the first seeded page was written: 2026-01-06T09:00:00Z.
const FIRST_PAGE_AT: i64 = 1_767_690_000;
/// When the long page's first comment was written: 2026-01-09T10:00:00Z.
const FIRST_COMMENT_AT: i64 = 1_767_952_800;
/// Between two seeded comments: 37 minutes.
const COMMENT_INTERVAL: i64 = 37 * 60;

/// (slug, title, Markdown), oldest first; each a day after the one before.
const PAGES: [(&str, &str, &str); 5] = [
    ("editing", "Editing pages", include_str!("../../../../app/src/site/seed/editing.md")),
    ("comments", "Comments", include_str!("../../../../app/src/site/seed/comments.md")),
    ("markdown", "Markdown on this wiki", include_str!("../../../../app/src/site/seed/markdown.md")),
    (LONG_PAGE, "A tour of kiln", include_str!("../../../../app/src/site/seed/tour.md")),
    ("welcome", "Welcome to the kiln wiki", include_str!("../../../../app/src/site/seed/welcome.md")),
];

/// The long page's comments, oldest first: (author, text).
const COMMENTS: [(&str, &str); 20] = [
    ("Ada", "Rendering on every request and still this fast: that is the point, isn't it?"),
    ("Grace", "The table of costs is useful. Is the SQLite figure with a warm page cache?"),
    ("Linus", "Typed routes are the feature I did not know I wanted."),
    ("Barbara", "A link that cannot break is worth more than a fast one."),
    (
        "Edsger",
        "Testing shows the presence, not the absence of bugs; compile errors show their absence, for a class of them.",
    ),
    ("Margaret", "I like that the raw HTML in Markdown becomes text. Fewer surprises."),
    ("Dennis", "One executable, as it should be."),
    ("Ken", "What does the access log cost when it is on?"),
    ("Frances", "Nice to see the CSRF token checked before the handler runs."),
    ("Alan", "<script>alert('comments are text')</script> — shown as typed, never run."),
    ("Radia", "How does the PostgreSQL pipeline behave when the server restarts?"),
    ("John", "The preview in the editor renders exactly like the page. Good."),
    ("Donald", "Premature optimisation is the root of all evil, but this is not premature: it is measured."),
    ("Leslie", "Sessions checked on the server's clock: the right call."),
    ("Niklaus", "Small files named after what they do. Easy to find my way."),
    ("Tony", "I would like to see the 422 form keep what I typed. Oh, it does."),
    ("Jean", "Tables & code blocks & links: the three things every wiki page ends up with."),
    ("Butler", "Is there a way to serve the same site from a sub-path, say /wiki?"),
    ("Sophie", "The feed validates. Absolute links from the configured URL, not from Host: good."),
    ("Kristen", "Twenty comments read per view, and still no cache. I am convinced."),
];

/// Creates the tables where missing and, when there are no pages, writes the seed;
/// whether it wrote it.
pub fn seed(conn: &mut Connection) -> rusqlite::Result<bool> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(SCHEMA)?;
    let empty: bool = tx.query_row("SELECT NOT EXISTS (SELECT 1 FROM page)", [], |r| r.get(0))?;
    if empty {
        let mut long_page = 0;
        for (day, (slug, title, body)) in (0..).zip(PAGES) {
            let at = FIRST_PAGE_AT + day * 86_400;
            tx.execute(
                "INSERT INTO page (slug, title, body, created, updated) VALUES (?1, ?2, ?3, ?4, ?4)",
                params![slug, title, body, at],
            )?;
            if slug == LONG_PAGE {
                long_page = tx.last_insert_rowid();
            }
        }
        for (i, (author, text)) in (0..).zip(COMMENTS) {
            let at = FIRST_COMMENT_AT + i * COMMENT_INTERVAL;
            tx.execute(
                "INSERT INTO comment (page_id, author, body, created) VALUES (?1, ?2, ?3, ?4)",
                params![long_page, author, text, at],
            )?;
        }
    }
    tx.commit()?;
    Ok(empty)
}
