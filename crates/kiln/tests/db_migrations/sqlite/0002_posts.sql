CREATE TABLE posts (
    id INTEGER PRIMARY KEY,
    author INTEGER NOT NULL REFERENCES users (id),
    title TEXT NOT NULL,
    body TEXT
);
CREATE INDEX posts_by_author ON posts (author);
