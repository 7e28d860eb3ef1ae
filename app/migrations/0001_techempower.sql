-- The TechEmpower benchmark's tables: 10,000 worlds and the twelve fortunes.
-- Written to run on SQLite and PostgreSQL alike, and to leave tables that already
-- exist (scripts/pg's, or a benchmark peer's) as they are.
CREATE TABLE IF NOT EXISTS world (id integer NOT NULL PRIMARY KEY, randomnumber integer NOT NULL DEFAULT 0);

-- Numbers scattered over 1..10000 by a multiplicative hash of the id; the endpoints
-- write random ones from the first /updates on.
WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < 10000)
INSERT INTO world (id, randomnumber)
SELECT id, (id * 2654435761) % 10000 + 1 FROM n WHERE true
ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS fortune (id integer NOT NULL PRIMARY KEY, message varchar(2048) NOT NULL);

INSERT INTO fortune (id, message) VALUES
    (1, 'fortune: No such file or directory'),
    (2, 'A computer scientist is someone who fixes things that aren''t broken.'),
    (3, 'After enough decimal places, nobody gives a damn.'),
    (4, 'A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1'),
    (5, 'A computer program does what you tell it to do, not what you want it to do.'),
    (6, 'Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen'),
    (7, 'Any program that runs right is obsolete.'),
    (8, 'A list is only as strong as its weakest link. — Donald Knuth'),
    (9, 'Feature: A bug with seniority.'),
    (10, 'Computers make very fast, very accurate mistakes.'),
    (11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
    (12, 'フレームワークのベンチマーク')
ON CONFLICT DO NOTHING;
