-- When the editor's sessions last ended (logout): a session started before `ended`
-- (Unix milliseconds) is over, even though a copy of its signed cookie stays valid until
-- it expires. One row; the same SQL on SQLite and PostgreSQL.
CREATE TABLE session_end (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    ended BIGINT NOT NULL
);
INSERT INTO session_end (id, ended) VALUES (1, 0);
