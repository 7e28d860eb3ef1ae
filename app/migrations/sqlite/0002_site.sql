-- The demo site's pages and comments (SQLite). Times are Unix seconds (UTC).
-- `INTEGER PRIMARY KEY` is SQLite's rowid: numbered on insert.
CREATE TABLE page (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE INDEX page_newest ON page (created DESC, id DESC);

CREATE TABLE comment (
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES page (id) ON DELETE CASCADE,
    author TEXT NOT NULL,
    body TEXT NOT NULL,
    created BIGINT NOT NULL
);
CREATE INDEX comment_of_page ON comment (page_id, id);
