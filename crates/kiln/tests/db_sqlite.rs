//! The database layer on SQLite: every query, migrations, persistence.

mod db_common;

use std::path::PathBuf;

use db_common::on_worker;
use kiln::db::{Database, DbError, DbOptions, WORLD_ROWS};

/// A fresh path under the system temp dir, removed with its WAL files on drop.
struct TempDb(PathBuf);

impl TempDb {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("kiln-db-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDb(dir.join("nested").join("kiln.sqlite"))
    }

    fn url(&self) -> String {
        format!("sqlite://{}", self.0.display())
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent().and_then(|p| p.parent()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn open(tmp: &TempDb) -> Database {
    Database::open(&tmp.url(), DbOptions { sqlite_readers: 2, ..DbOptions::default() }).expect("open sqlite")
}

#[test]
fn reads_on_a_new_file() {
    let tmp = TempDb::new("reads");
    let db = open(&tmp);
    assert_eq!(db.backend_name(), "sqlite");
    on_worker(async { db_common::reads(&db.worker()).await });
}

#[test]
fn fortunes_are_seeded_byte_for_byte() {
    let tmp = TempDb::new("fortunes");
    let db = open(&tmp);
    on_worker(async { db_common::fortunes(&db.worker()).await });
}

#[test]
fn updates_persist() {
    let tmp = TempDb::new("updates");
    let db = open(&tmp);
    on_worker(async { db_common::updates(&db.worker()).await });
}

#[test]
fn cached_queries() {
    let tmp = TempDb::new("cached");
    let db = open(&tmp);
    on_worker(async { db_common::cached(&db.worker()).await });
}

#[test]
fn mix_async_and_blocking() {
    let tmp = TempDb::new("mix");
    let db = open(&tmp);
    on_worker(async { db_common::mix(&db.worker()).await });
}

#[test]
fn reopening_keeps_data_and_does_not_reseed() {
    let tmp = TempDb::new("reopen");
    let updated = {
        let db = open(&tmp);
        on_worker(async { db.worker().update_worlds(50).await.expect("update") })
    };
    let db = open(&tmp);
    let ids = updated.iter().map(|w| w.id).collect();
    let stored = on_worker(async { db.worker().worlds_by_id(ids).await.expect("read") });
    assert_eq!(stored, updated, "updates survive a reopen; migrations did not reseed");
    let all = on_worker(async { db.worker().cached_worlds(1).await.expect("cache") });
    assert_eq!(all.len(), 1);
    let count = rusqlite::Connection::open(&tmp.0)
        .and_then(|c| c.query_row("SELECT count(*) FROM world", [], |r| r.get::<_, i32>(0)))
        .expect("count");
    assert_eq!(count, WORLD_ROWS);
}

#[test]
fn workers_share_the_threads() {
    let tmp = TempDb::new("workers");
    let db = open(&tmp);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                on_worker(async {
                    let w = db.worker();
                    for _ in 0..20 {
                        w.update_worlds(10).await.expect("update");
                        assert_eq!(w.worlds(10).await.expect("read").len(), 10);
                    }
                })
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker thread");
    }
}

#[test]
fn bad_urls_are_refused() {
    for url in ["sqlite://", "mysql://localhost/db", "data/kiln.sqlite", "postgres://127.0.0.1:notaport/db"] {
        let err = Database::open(url, DbOptions::default()).expect_err(url);
        assert!(matches!(err, DbError::Open(_)), "{url}: {err}");
        assert_eq!(err.status(), 500);
    }
}
