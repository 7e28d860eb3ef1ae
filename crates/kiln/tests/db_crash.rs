//! `kill -9` of a process in the middle of a migration and in the middle of a
//! transaction leaves a SQLite file that passes `PRAGMA integrity_check`, holds all
//! or nothing of what was interrupted, and opens again.
//!
//! The process killed is this test binary itself, run again with `KILN_CRASH_CHILD`
//! set: it writes a marker file once the work is under way, and the parent kills it.

use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use kiln::db::{Database, Migration, Options, rusqlite};
use kiln_test_support::{TempDir, on_worker, poll_until};

/// A migration that takes a while: three million rows.
static SLOW_MIGRATION: &[Migration] = &[Migration::new(
    1,
    "big",
    "CREATE TABLE big (x integer NOT NULL);
     WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000)
     INSERT INTO big SELECT x FROM c;",
)];
const BIG_ROWS: i64 = 3_000_000;

static USERS: &[Migration] =
    &[Migration::new(1, "users", "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")];
/// Rows the child inserts in its never-committed transaction, at most.
const TRANSACTION_ROWS: usize = 1_000_000;

/// Runs `test` again in a child process that does `role` on the database in `dir`.
fn child(test: &str, role: &str, dir: &Path) -> Child {
    Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env("KILN_CRASH_CHILD", role)
        .env("KILN_CRASH_DIR", dir)
        .spawn()
        .expect("spawn the child")
}

/// In the child: `Some(dir)` when this process is the one to do `role`.
fn child_role(role: &str) -> Option<std::path::PathBuf> {
    (std::env::var("KILN_CRASH_CHILD").ok()? == role).then(|| std::env::var_os("KILN_CRASH_DIR").map(Into::into))?
}

fn url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("crash.sqlite").display())
}

/// Kills the child (SIGKILL) once it has written `marker`, after a moment more.
fn kill_once_under_way(mut child: Child, marker: &Path) {
    let started = poll_until(Duration::from_secs(60), || marker.exists().then_some(()));
    assert!(started.is_some(), "the child never started its work");
    std::thread::sleep(Duration::from_millis(150));
    child.kill().expect("kill -9");
    child.wait().expect("reap");
}

fn integrity(dir: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(dir.join("crash.sqlite")).expect("open after the crash");
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("integrity_check");
    assert_eq!(check, "ok");
    conn
}

#[test]
fn kill_9_mid_migration_leaves_all_or_nothing() {
    if let Some(dir) = child_role("migrate") {
        std::fs::write(dir.join("started"), b"").expect("marker");
        let _ = Database::open(&url(&dir), Options::default().migrations(SLOW_MIGRATION));
        // Finished before the kill: wait for it, as the parent expects a kill.
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let dir = TempDir::new("crash-migration");
    kill_once_under_way(
        child("kill_9_mid_migration_leaves_all_or_nothing", "migrate", dir.path()),
        &dir.path().join("started"),
    );
    let conn = integrity(dir.path());
    let has_big: bool =
        conn.query_row("SELECT count(*) > 0 FROM sqlite_master WHERE name = 'big'", [], |r| r.get(0)).unwrap();
    let recorded: bool = conn
        .query_row("SELECT count(*) > 0 FROM sqlite_master WHERE name = 'kiln_migrations'", [], |r| r.get(0))
        .unwrap()
        && conn.query_row("SELECT count(*) FROM kiln_migrations", [], |r| r.get::<_, i64>(0)).unwrap() == 1;
    if has_big {
        let rows: i64 = conn.query_row("SELECT count(*) FROM big", [], |r| r.get(0)).unwrap();
        assert_eq!((rows, recorded), (BIG_ROWS, true), "a table from the migration is whole and recorded");
    } else {
        assert!(!recorded, "nothing of the migration, and it is not recorded");
    }
    drop(conn);
    // It opens again, applying the migration if the kill interrupted it.
    let database = Database::open(&url(dir.path()), Options::default().migrations(SLOW_MIGRATION)).expect("reopen");
    on_worker(async {
        let (rows,): (i64,) = database.worker().query_one("SELECT count(*) FROM big", &[]).await.unwrap();
        assert_eq!(rows, BIG_ROWS);
    });
}

#[test]
fn kill_9_mid_transaction_leaves_nothing_of_it() {
    if let Some(dir) = child_role("transaction") {
        let database = Database::open(&url(&dir), Options::default().migrations(USERS)).expect("open");
        on_worker(async {
            let db = database.worker();
            db.insert("INSERT INTO users (name) VALUES ($1)", &[&"committed"]).await.expect("before");
            let _ = db
                .transaction(async |tx| {
                    for i in 0..TRANSACTION_ROWS {
                        tx.insert("INSERT INTO users (name) VALUES ($1)", &[&format!("never {i}")]).await?;
                        if i == 100 {
                            std::fs::write(dir.join("started"), b"").expect("marker");
                        }
                    }
                    Ok::<_, kiln::db::Error>(())
                })
                .await;
        });
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let dir = TempDir::new("crash-transaction");
    kill_once_under_way(
        child("kill_9_mid_transaction_leaves_nothing_of_it", "transaction", dir.path()),
        &dir.path().join("started"),
    );
    let conn = integrity(dir.path());
    let names: Vec<String> = conn
        .prepare("SELECT name FROM users")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(names, ["committed"], "only what was committed before the transaction");
    drop(conn);
    let database = Database::open(&url(dir.path()), Options::default().migrations(USERS)).expect("reopen");
    on_worker(async {
        let db = database.worker();
        db.insert("INSERT INTO users (name) VALUES ($1)", &[&"after"]).await.expect("writes again");
    });
}
