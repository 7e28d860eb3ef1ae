//! The pages the site starts with, written on its first start (when it has no pages):
//! a few short ones and the long one, `/pages/tour`, with twenty comments, which the
//! `wiki` benchmark reads (see `docs/wiki-page.md`). Every value is fixed, so every
//! seeded database, and every benchmark peer, holds the same bytes.

use kiln::db::{Database, Error};

use super::model;

/// The slug of the long page: about 10 KB of Markdown with code, tables and links.
pub(crate) const LONG_PAGE: &str = "tour";
/// When the first seeded page was written: 2026-01-06T09:00:00Z.
const FIRST_PAGE_AT: i64 = 1_767_690_000;
/// When the long page's first comment was written: 2026-01-09T10:00:00Z.
const FIRST_COMMENT_AT: i64 = 1_767_952_800;
/// Between two seeded comments: 37 minutes.
const COMMENT_INTERVAL: i64 = 37 * 60;

/// (slug, title, Markdown), oldest first; each a day after the one before.
pub(crate) const PAGES: [(&str, &str, &str); 5] = [
    ("editing", "Editing pages", include_str!("seed/editing.md")),
    ("comments", "Comments", include_str!("seed/comments.md")),
    ("markdown", "Markdown on this wiki", include_str!("seed/markdown.md")),
    (LONG_PAGE, "A tour of kiln", include_str!("seed/tour.md")),
    ("welcome", "Welcome to the kiln wiki", include_str!("seed/welcome.md")),
];

/// The long page's comments, oldest first: (author, text).
pub(crate) const COMMENTS: [(&str, &str); 20] = [
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

/// Writes the seed when the database has no pages; leaves any other state as it is.
pub(crate) fn seed_if_empty(database: &Database) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Open(format!("a runtime to seed the site: {e}")))?;
    let db = database.worker();
    tokio::task::LocalSet::new().block_on(&runtime, async {
        if model::count(&db).await? > 0 {
            return Ok(());
        }
        let seeded = db
            .transaction(async |tx| {
                let mut long_page = 0;
                for (day, (slug, title, body)) in (0..).zip(PAGES) {
                    let at = FIRST_PAGE_AT + day * 86_400;
                    let id = tx
                        .insert(
                            "INSERT INTO page (slug, title, body, created, updated) VALUES ($1, $2, $3, $4, $4)",
                            &[&slug, &title, &body, &at],
                        )
                        .await?;
                    if slug == LONG_PAGE {
                        long_page = id;
                    }
                }
                for (i, (author, text)) in (0..).zip(COMMENTS) {
                    let at = FIRST_COMMENT_AT + i * COMMENT_INTERVAL;
                    tx.insert(
                        "INSERT INTO comment (page_id, author, body, created) VALUES ($1, $2, $3, $4)",
                        &[&long_page, &author, &text, &at],
                    )
                    .await?;
                }
                Ok::<_, Error>(())
            })
            .await;
        match seeded {
            // Another process seeded it first.
            Err(Error::Conflict { .. }) => Ok(()),
            other => other,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_long_page_is_about_ten_kilobytes() {
        let (_, _, body) = PAGES.iter().find(|(slug, ..)| *slug == LONG_PAGE).expect("the long page");
        assert!((9_000..=12_000).contains(&body.len()), "{} bytes", body.len());
        for part in ["```rust", "| --- |", "](https://"] {
            assert!(body.contains(part), "code, a table and links: {part}");
        }
    }

    #[test]
    fn seeded_slugs_are_what_the_editor_accepts() {
        for (slug, ..) in PAGES {
            assert!(slug.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{slug}");
        }
    }
}
