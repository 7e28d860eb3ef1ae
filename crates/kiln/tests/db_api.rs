//! `kiln::db` through its public API, the same code on SQLite and on PostgreSQL: a
//! users-and-posts schema from migrations, CRUD, `FromRow`, typed errors,
//! transactions, concurrent writers and the migrations' refusals.
//!
//! Each test runs on both backends (`sqlite::NAME`, `postgres::NAME`), each on a
//! database of its own: a fresh SQLite file, or a fresh PostgreSQL schema in the
//! database of `KILN_PG_URL` (`scripts/pg`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use kiln::db::{Database, Error, FromRow, Migration, Options};
use kiln_test_support::{TempDir, on_worker};

static SQLITE: &[Migration] = kiln::db::migrations!("tests/db_migrations/sqlite");
#[cfg(feature = "postgres")]
static POSTGRES: &[Migration] = kiln::db::migrations!("tests/db_migrations/postgres");

/// A database of the test's own.
struct Fixture {
    url: String,
    migrations: &'static [Migration],
    _dir: Option<TempDir>,
}

impl Fixture {
    fn sqlite(name: &str) -> Fixture {
        let dir = TempDir::new(&format!("db-api-{name}"));
        Fixture { url: dir.sqlite_url(), migrations: SQLITE, _dir: Some(dir) }
    }

    /// A schema named after the test, dropped and created anew, made the first on the
    /// search path through the URL's `options`.
    #[cfg(feature = "postgres")]
    fn postgres(name: &str) -> Option<Fixture> {
        let base = kiln_test_support::pg_url(&format!("db_api::postgres::{name}"))?;
        let schema = format!("kt_{name}");
        on_worker(async {
            let (client, connection) =
                kiln::db::tokio_postgres::connect(&base, kiln::db::tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(connection);
            client
                .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"))
                .await
                .expect("a fresh schema");
        });
        let separator = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{separator}options=-c%20search_path%3D{schema}");
        Some(Fixture { url, migrations: POSTGRES, _dir: None })
    }

    fn open_with(&self, migrations: &'static [Migration]) -> Result<Database, Error> {
        Database::open(&self.url, Options { sqlite_readers: 2, ..Options::default() }.migrations(migrations))
    }

    fn open(&self) -> Database {
        self.open_with(self.migrations).expect("open and migrate")
    }
}

/// Runs each test function on both backends.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(super::Fixture::sqlite(stringify!($name))) })*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(#[test] fn $name() {
                let Some(fixture) = super::Fixture::postgres(stringify!($name)) else { return };
                super::$name(fixture)
            })*
        }
    };
}

on_both_backends!(
    crud,
    from_row_reads_renamed_optional_and_missing_columns,
    a_type_mismatch_names_the_column,
    columns_are_found_whatever_their_case_and_after_nulls,
    a_unique_violation_is_a_conflict,
    a_foreign_key_violation_is_a_conflict,
    a_transaction_commits_on_ok,
    a_transaction_that_returns_err_leaves_nothing_behind,
    a_transaction_that_panics_leaves_nothing_behind,
    two_workers_writing_at_once_lose_no_row,
    parameters_of_every_type_round_trip,
    a_statement_error_is_named_and_the_connection_goes_on,
    migrations_are_applied_once,
    a_changed_migration_refuses_to_start,
    a_database_newer_than_the_binary_refuses_to_start,
);

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
struct User {
    id: i64,
    #[from_row(rename = "user_name")]
    name: String,
    email: Option<String>,
    #[from_row(default)]
    karma: i32,
}

const USER_COLUMNS: &str = "SELECT id, user_name, email, karma FROM users";

fn crud(f: Fixture) {
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let ada = db
            .insert("INSERT INTO users (user_name, email) VALUES ($1, $2)", &[&"ada", &Some("ada@example.org")])
            .await
            .expect("insert ada");
        let grace = db.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"grace"]).await.expect("insert grace");
        assert_ne!(ada, grace);

        let user: User = db.query_one(&format!("{USER_COLUMNS} WHERE id = $1"), &[&ada]).await.expect("ada");
        assert_eq!(user, User { id: ada, name: "ada".into(), email: Some("ada@example.org".into()), karma: 0 });
        let missing: Option<User> = db.query_opt(&format!("{USER_COLUMNS} WHERE id = $1"), &[&-1_i64]).await.unwrap();
        assert_eq!(missing, None);
        let e = db.query_one::<User>(&format!("{USER_COLUMNS} WHERE id = $1"), &[&-1_i64]).await.unwrap_err();
        assert_eq!(e, Error::NotFound);
        assert_eq!(kiln::db::status(&e), 404);

        let changed = db.execute("UPDATE users SET karma = karma + $2 WHERE user_name = $1", &[&"grace", &5]).await;
        assert_eq!(changed, Ok(1));
        assert_eq!(db.execute("UPDATE users SET karma = 1 WHERE user_name = $1", &[&"nobody"]).await, Ok(0));
        let all: Vec<User> = db.query_all(&format!("{USER_COLUMNS} ORDER BY user_name"), &[]).await.unwrap();
        assert_eq!(all.iter().map(|u| (u.name.as_str(), u.karma)).collect::<Vec<_>>(), [("ada", 0), ("grace", 5)]);

        let post = db
            .insert("INSERT INTO posts (author, title, body) VALUES ($1, $2, $3) RETURNING id", &[&ada, &"Notes", &"…"])
            .await
            .expect("insert a post");
        let (title, body): (String, Option<String>) =
            db.query_one("SELECT title, body FROM posts WHERE id = $1", &[&post]).await.unwrap();
        assert_eq!((title.as_str(), body.as_deref()), ("Notes", Some("…")));
        assert_eq!(db.execute("DELETE FROM posts WHERE author = $1", &[&ada]).await, Ok(1));
        assert_eq!(db.execute("DELETE FROM users WHERE id = $1", &[&ada]).await, Ok(1));
        let (count,): (i64,) = db.query_one("SELECT count(*) FROM users", &[]).await.unwrap();
        assert_eq!(count, 1);
    });
}

fn from_row_reads_renamed_optional_and_missing_columns(f: Fixture) {
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let id = db.insert("INSERT INTO users (user_name, karma) VALUES ($1, 7)", &[&"lin"]).await.unwrap();
        // `email` is NULL: an `Option`; `karma` is not selected: its default.
        let user: User = db.query_one("SELECT id, user_name, email FROM users WHERE id = $1", &[&id]).await.unwrap();
        assert_eq!(user, User { id, name: "lin".into(), email: None, karma: 0 });
        let user: User = db.query_one(&format!("{USER_COLUMNS} WHERE id = $1"), &[&id]).await.unwrap();
        assert_eq!(user.karma, 7);
        // A column that is neither selected nor defaulted is named.
        let e = db.query_one::<User>("SELECT id, email FROM users", &[]).await.unwrap_err();
        assert!(
            matches!(&e, Error::Decode { column, message } if column == "user_name" && message.contains("no such column")),
            "{e:?}"
        );
    });
}

fn columns_are_found_whatever_their_case_and_after_nulls(f: Fixture) {
    // Fields are looked up by exact name first, then ignoring case as SQL does; each
    // value is found by walking the row's fields, so NULLs before it must be skipped.
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let id = db.insert("INSERT INTO users (user_name, karma) VALUES ($1, 3)", &[&"kay"]).await.unwrap();
        let sql = r#"SELECT NULL AS email, id AS "ID", user_name AS "User_Name", karma FROM users WHERE id = $1"#;
        let user: User = db.query_one(sql, &[&id]).await.unwrap();
        assert_eq!(user, User { id, name: "kay".into(), email: None, karma: 3 });
        let (a, b, c): (Option<i64>, Option<String>, i64) =
            db.query_one("SELECT NULL, NULL, karma FROM users WHERE id = $1", &[&id]).await.unwrap();
        assert_eq!((a, b, c), (None, None, 3));
    });
}

fn a_type_mismatch_names_the_column(f: Fixture) {
    #[derive(Debug, FromRow)]
    struct Wrong {
        #[allow(dead_code)]
        id: i64,
        #[allow(dead_code)]
        user_name: i64,
    }
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        db.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"mo"]).await.unwrap();
        let e = db.query_one::<Wrong>("SELECT id, user_name FROM users", &[]).await.unwrap_err();
        assert_eq!(e, Error::Decode { column: "user_name".into(), message: "expected an integer, found text".into() });
        assert_eq!(e.to_string(), "cannot decode column `user_name`: expected an integer, found text");
        // An integer that does not fit the field.
        let e = db.query_one::<(i8,)>("SELECT 1000", &[]).await.unwrap_err();
        assert!(
            matches!(&e, Error::Decode { column, message } if column == "#0" && message.contains("does not fit")),
            "{e:?}"
        );
    });
}

fn a_unique_violation_is_a_conflict(f: Fixture) {
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        db.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"kim"]).await.unwrap();
        let e = db.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"kim"]).await.unwrap_err();
        assert!(e.is_unique_violation(), "{e:?}");
        assert_eq!(kiln::db::status(&e), 409);
        let (count,): (i64,) = db.query_one("SELECT count(*) FROM users", &[]).await.unwrap();
        assert_eq!(count, 1);
    });
}

fn a_foreign_key_violation_is_a_conflict(f: Fixture) {
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let e =
            db.insert("INSERT INTO posts (author, title) VALUES ($1, $2)", &[&9_999_i64, &"orphan"]).await.unwrap_err();
        assert!(e.is_foreign_key_violation(), "{e:?}");
        assert_eq!(kiln::db::status(&e), 409);
    });
}

async fn count_users(db: &kiln::db::Db) -> i64 {
    db.query_one::<(i64,)>("SELECT count(*) FROM users", &[]).await.expect("count").0
}

fn a_transaction_commits_on_ok(f: Fixture) {
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let (author, post) = db
            .transaction(async |tx| {
                let author = tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"tx"]).await?;
                // The transaction sees its own writes.
                let (name,): (String,) = tx.query_one("SELECT user_name FROM users WHERE id = $1", &[&author]).await?;
                assert_eq!(name, "tx");
                let post = tx.insert("INSERT INTO posts (author, title) VALUES ($1, $2)", &[&author, &"t"]).await?;
                Ok::<_, Error>((author, post))
            })
            .await
            .expect("committed");
        let (title,): (String,) =
            db.query_one("SELECT title FROM posts WHERE id = $1 AND author = $2", &[&post, &author]).await.unwrap();
        assert_eq!(title, "t");
    });
}

fn a_transaction_that_returns_err_leaves_nothing_behind(f: Fixture) {
    #[derive(Debug, PartialEq)]
    enum Refused {
        Db(Error),
        TooMany,
    }
    impl From<Error> for Refused {
        fn from(e: Error) -> Self {
            Refused::Db(e)
        }
    }
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let result = db
            .transaction(async |tx| {
                tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"a"]).await?;
                tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"b"]).await?;
                Err::<(), _>(Refused::TooMany)
            })
            .await;
        assert_eq!(result, Err(Refused::TooMany));
        assert_eq!(count_users(&db).await, 0, "rolled back");
        // A statement failing inside rolls back what came before it.
        let result = db
            .transaction(async |tx| {
                tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"c"]).await?;
                tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"c"]).await?;
                Ok::<_, Refused>(())
            })
            .await;
        assert!(matches!(&result, Err(Refused::Db(e)) if e.is_unique_violation()), "{result:?}");
        assert_eq!(count_users(&db).await, 0, "rolled back");
        // And the next transaction starts clean.
        db.transaction(async |tx| tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"d"]).await.map(drop))
            .await
            .expect("a clean transaction");
        assert_eq!(count_users(&db).await, 1);
    });
}

fn a_transaction_that_panics_leaves_nothing_behind(f: Fixture) {
    let database = f.open();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        on_worker(async {
            let db = database.worker();
            let _ = db
                .transaction(async |tx| {
                    tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"doomed"]).await?;
                    panic!("a handler bug in the middle of a transaction");
                    #[allow(unreachable_code)]
                    Ok::<_, Error>(())
                })
                .await;
        })
    }));
    assert!(panicked.is_err());
    on_worker(async {
        let db = database.worker();
        assert_eq!(count_users(&db).await, 0, "rolled back");
        // The writer (SQLite) or the server (PostgreSQL) is free for the next one.
        db.transaction(async |tx| tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"next"]).await.map(drop))
            .await
            .expect("a transaction after the panic");
        assert_eq!(count_users(&db).await, 1);
    });
}

fn two_workers_writing_at_once_lose_no_row(f: Fixture) {
    const ROWS: usize = 150;
    let database = f.open();
    std::thread::scope(|scope| {
        for worker in 0..2 {
            let database = &database;
            scope.spawn(move || {
                on_worker(async move {
                    let db = database.worker();
                    let writes = (0..ROWS).map(|i| {
                        let db = &db;
                        async move {
                            let name = format!("w{worker}-{i}");
                            if i % 3 == 0 {
                                db.transaction(async |tx| {
                                    tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&name]).await
                                })
                                .await
                            } else {
                                db.insert("INSERT INTO users (user_name) VALUES ($1)", &[&name]).await
                            }
                        }
                    });
                    for result in futures_join_all(writes).await {
                        result.expect("every write succeeds");
                    }
                });
            });
        }
    });
    on_worker(async {
        assert_eq!(count_users(&database.worker()).await, 2 * ROWS as i64);
    });
}

/// Awaits every future, concurrently, in order.
async fn futures_join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in pinned.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *output = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    outputs.into_iter().map(|o| o.expect("ready")).collect()
}

fn parameters_of_every_type_round_trip(f: Fixture) {
    #[derive(Debug, PartialEq, FromRow)]
    struct Values {
        b: bool,
        i: i64,
        x: f64,
        t: String,
        by: Vec<u8>,
        n: Option<String>,
        #[cfg(feature = "chrono")]
        ts: kiln::db::chrono::NaiveDateTime,
    }
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        db.execute(
            "CREATE TABLE vals (b boolean, i bigint, x double precision, t text, by bytea, n text, ts timestamp)",
            &[],
        )
        .await
        .expect("create");
        #[cfg(feature = "chrono")]
        let ts = kiln::db::chrono::DateTime::from_timestamp_micros(1_700_000_000_123_456).unwrap().naive_utc();
        #[cfg(not(feature = "chrono"))]
        let ts = "2023-11-14 22:13:20.123456";
        let bytes = vec![0_u8, 255, 10];
        let none: Option<&str> = None;
        db.execute(
            "INSERT INTO vals (b, i, x, t, by, n, ts) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[&true, &(-1_i64 << 40), &0.25, &"x'y\"z 🌍", &bytes, &none, &ts],
        )
        .await
        .expect("insert every type");
        let got: Values = db.query_one("SELECT b, i, x, t, by, n, ts FROM vals", &[]).await.expect("read back");
        assert_eq!(
            got,
            Values {
                b: true,
                i: -1 << 40,
                x: 0.25,
                t: "x'y\"z 🌍".into(),
                by: bytes.clone(),
                n: None,
                #[cfg(feature = "chrono")]
                ts,
            }
        );
        // `$n` name their parameter whatever order they appear in, on both backends.
        let (a, b): (String, i64) = db.query_one("SELECT $2 || '', $1 + 0", &[&41_i64, &"second"]).await.unwrap();
        assert_eq!((a.as_str(), b), ("second", 41));
        let e = db.execute("UPDATE vals SET i = $1", &[]).await.unwrap_err();
        assert!(matches!(&e, Error::Param { .. }), "{e:?}");
    });
}

fn a_statement_error_is_named_and_the_connection_goes_on(f: Fixture) {
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let e = db.query_all::<(i64,)>("SELECT nope FROM users", &[]).await.unwrap_err();
        assert!(matches!(&e, Error::Query { message, .. } if message.contains("nope")), "{e:?}");
        assert_eq!(kiln::db::status(&e), 500);
        assert_eq!(count_users(&db).await, 0);
    });
}

fn migrations_are_applied_once(f: Fixture) {
    for _ in 0..2 {
        let database = f.open();
        on_worker(async {
            let db = database.worker();
            let recorded: Vec<(i64, String)> =
                db.query_all("SELECT version, name FROM kiln_migrations ORDER BY version", &[]).await.unwrap();
            assert_eq!(recorded, [(1, "users".to_owned()), (2, "posts".to_owned())]);
        });
    }
}

fn a_changed_migration_refuses_to_start(f: Fixture) {
    f.open();
    let changed: &'static [Migration] = Box::leak(
        vec![Migration::new(1, "users", "CREATE TABLE users (id integer PRIMARY KEY)"), f.migrations[1]]
            .into_boxed_slice(),
    );
    let e = f.open_with(changed).unwrap_err();
    assert!(matches!(&e, Error::Migration(m) if m.contains("0001_users.sql has changed since it was applied")), "{e}");
}

fn a_database_newer_than_the_binary_refuses_to_start(f: Fixture) {
    f.open();
    let older: &'static [Migration] = Box::leak(vec![f.migrations[0]].into_boxed_slice());
    let e = f.open_with(older).unwrap_err();
    assert!(
        matches!(&e, Error::Migration(m) if m.contains("0002_posts.sql") && m.contains("newer than the binary")),
        "{e}"
    );
}

#[test]
fn opening_a_database_without_migrations_creates_no_table() {
    let f = Fixture::sqlite("no-tables");
    let database = f.open_with(&[]).expect("open");
    on_worker(async {
        let (tables,): (i64,) =
            database.worker().query_one("SELECT count(*) FROM sqlite_master WHERE type = 'table'", &[]).await.unwrap();
        assert_eq!(tables, 0);
    });
}

#[test]
fn sqlite_in_memory_is_refused_with_a_message_that_says_why() {
    // The audit: `sqlite://:memory:` failed with "journal_mode is memory, WAL refused".
    for url in ["sqlite://:memory:", "sqlite://file::memory:?cache=shared", "sqlite://file:x?mode=memory"] {
        let err = kiln::db::Database::open(url, kiln::db::Options::default()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("in-memory database is one per connection"), "{url}: {message}");
        assert!(message.contains("give a file path"), "{url}: {message}");
    }
}

#[test]
fn sqlite_calls_past_the_queue_bound_get_503_at_once() {
    use std::rc::Rc;
    const WRITES: usize = 5_000;
    let f = Fixture::sqlite("queue-bound");
    let database = f.open();
    on_worker(async {
        let db = Rc::new(database.worker());
        // Hold the writer until every write is queued or refused.
        let (release, released) = std::sync::mpsc::channel::<()>();
        let held = {
            let db = Rc::clone(&db);
            tokio::task::spawn_local(async move {
                db.sqlite(move |_| {
                    let _ = released.recv();
                    Ok(())
                })
                .await
            })
        };
        tokio::task::yield_now().await;
        // Each write counts itself as its first poll queues it.
        let queued = Rc::new(std::cell::Cell::new(0));
        let writes: Vec<_> = (0..WRITES)
            .map(|i| {
                let (db, queued) = (Rc::clone(&db), Rc::clone(&queued));
                tokio::task::spawn_local(async move {
                    let name = format!("q{i}");
                    let params: [&dyn kiln::db::ToParam; 1] = [&name];
                    let mut write = std::pin::pin!(db.execute("INSERT INTO users (user_name) VALUES ($1)", &params));
                    // The first poll queues the call (or refuses it).
                    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(write.as_mut().poll(cx))).await;
                    queued.set(queued.get() + 1);
                    match first {
                        std::task::Poll::Ready(done) => done,
                        std::task::Poll::Pending => write.await,
                    }
                })
            })
            .collect();
        while queued.get() < WRITES {
            tokio::task::yield_now().await;
        }
        // And the last batch leaves at the end of a turn.
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        release.send(()).expect("release the writer");
        held.await.expect("task").expect("the holding call");
        let mut refused = 0;
        for write in writes {
            match write.await.expect("task") {
                Ok(1) => {}
                Err(Error::Unavailable(why)) if why.contains("too many SQLite calls queued") => refused += 1,
                other => panic!("a write neither done nor refused: {other:?}"),
            }
        }
        let written = count_users(&db).await as usize;
        assert!(refused > 0, "{WRITES} calls behind a held writer: some must be refused");
        assert!(written <= 4_096, "at most the queue's bound waited: {written}");
        assert_eq!(written + refused, WRITES);
    });
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_statement_timeout_is_a_timeout_and_the_native_client_works() {
    let Some(f) = Fixture::postgres("statement_timeout") else { return };
    let options = Options { statement_timeout: Some(std::time::Duration::from_millis(100)), ..Options::default() };
    let database = Database::open(&f.url, options.migrations(f.migrations)).expect("open");
    on_worker(async {
        let db = database.worker();
        let e = db.query_one::<(String,)>("SELECT pg_sleep(2)::text", &[]).await.unwrap_err();
        assert_eq!(e, Error::Timeout);
        assert_eq!(kiln::db::status(&e), 503);
        // The connection goes on.
        let (one,): (i32,) = db.query_one("SELECT 1", &[]).await.unwrap();
        assert_eq!(one, 1);
        // The native client: what the common API does not cover, on the same database.
        let client = db.postgres().await.expect("the native client");
        client
            .batch_execute(
                "INSERT INTO users (user_name) VALUES ('native'); INSERT INTO users (user_name) VALUES ('client')",
            )
            .await
            .expect("a simple-protocol batch");
        assert_eq!(count_users(&db).await, 2);
    });
}

#[test]
fn sqlite_native_connection_runs_on_the_writer() {
    let f = Fixture::sqlite("native");
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        let mode: String = db.sqlite(|conn| conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))).await.unwrap();
        assert_eq!(mode, "wal");
        db.sqlite(|conn| {
            conn.execute_batch(
                "INSERT INTO users (user_name) VALUES ('a'); INSERT INTO users (user_name) VALUES ('b');",
            )
        })
        .await
        .unwrap();
        assert_eq!(count_users(&db).await, 2);
    });
}

#[test]
fn sqlite_a_write_through_db_inside_its_own_transaction_is_refused_at_once() {
    // The audit: `db.execute` instead of `tx.execute` inside `db.transaction` queued
    // behind the transaction holding SQLite's one writer, waited the whole query
    // timeout, and answered 503 "database unavailable" with nothing logged.
    let f = Fixture::sqlite("waits-for-itself");
    let database = f.open();
    on_worker(async {
        // As a request is: a task of its own (the check needs to know whose it is).
        let task = tokio::task::spawn_local({
            let db = database.worker();
            async move {
                let refused = db
                    .transaction(async |tx| {
                        tx.insert("INSERT INTO users (user_name) VALUES ($1)", &[&"inside"]).await?;
                        let wrong = db.execute("INSERT INTO users (user_name) VALUES ($1)", &[&"around"]).await;
                        assert_eq!(wrong, Err(Error::WaitsForItself));
                        let nested = db.transaction(async |_| Ok::<_, Error>(())).await;
                        assert_eq!(nested, Err(Error::WaitsForItself));
                        // Reads through `db` go to the readers, and still work.
                        assert_eq!(count_users(&db).await, 0, "the transaction is not committed yet");
                        Ok::<_, Error>(())
                    })
                    .await;
                assert_eq!(refused, Ok(()));
                // Once the transaction is over, `db` writes again.
                db.execute("INSERT INTO users (user_name) VALUES ($1)", &[&"after"]).await.unwrap();
                count_users(&db).await
            }
        });
        assert_eq!(task.await.unwrap(), 2);
        // Another task's write waits for the transaction instead (it is not the holder).
        let db = database.worker();
        let holder = tokio::task::spawn_local({
            let db = database.worker();
            async move {
                db.transaction(async |tx| {
                    tx.execute("INSERT INTO users (user_name) VALUES ($1)", &[&"slow"]).await?;
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    Ok::<_, Error>(())
                })
                .await
            }
        });
        tokio::task::yield_now().await;
        db.execute("INSERT INTO users (user_name) VALUES ($1)", &[&"other"]).await.unwrap();
        holder.await.unwrap().unwrap();
        assert_eq!(count_users(&db).await, 4);
    });
}

/// `/metrics`' `kiln_db_queued_calls` on PostgreSQL: a call is counted from when it is
/// made until it is answered.
#[cfg(feature = "postgres")]
#[test]
fn a_postgres_call_is_counted_in_the_queue_depth_until_answered() {
    let Some(f) = Fixture::postgres("queue_depth") else { return };
    let database = f.open();
    on_worker(async {
        let db = database.worker();
        assert_eq!(database.queued_calls(), Some(0));
        let slow = db.query_one::<(i32,)>("SELECT 1 FROM pg_sleep(0.3)", &[]);
        let mut slow = std::pin::pin!(slow);
        let first =
            std::future::poll_fn(|cx| std::task::Poll::Ready(std::future::Future::poll(slow.as_mut(), cx))).await;
        assert!(first.is_pending(), "pg_sleep(0.3) cannot be answered at once");
        assert_eq!(database.queued_calls(), Some(1));
        assert_eq!(slow.await.expect("the slow call").0, 1);
        assert_eq!(database.queued_calls(), Some(0));
    });
}
