//! The database layer on PostgreSQL: every query, pipelining, and an outage with
//! recovery. Needs `KILN_PG_URL` (see `scripts/pg`); without it each test says so
//! loudly on stderr and passes without running.

mod db_common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use db_common::{on_worker, poll_until};
use kiln::db::{Database, DbError, DbOptions};

fn pg_url(test: &str) -> Option<String> {
    match std::env::var("KILN_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!(
                "\n!!! SKIPPED {test}: KILN_PG_URL is not set, so this PostgreSQL test did NOT run.\n\
                 !!! Start a throwaway server with `eval \"$(scripts/pg start)\"` and run again.\n"
            );
            None
        }
    }
}

fn open(url: &str) -> Database {
    let options = DbOptions { query_timeout: Duration::from_secs(3), ..DbOptions::default() };
    Database::open(url, options).expect("open postgres")
}

#[test]
fn reads() {
    let Some(url) = pg_url("db_postgres::reads") else { return };
    let db = open(&url);
    assert_eq!(db.backend_name(), "postgres");
    on_worker(async { db_common::reads(&db.worker()).await });
}

#[test]
fn fortunes_byte_for_byte() {
    let Some(url) = pg_url("db_postgres::fortunes_byte_for_byte") else { return };
    let db = open(&url);
    on_worker(async { db_common::fortunes(&db.worker()).await });
}

#[test]
fn updates_persist() {
    let Some(url) = pg_url("db_postgres::updates_persist") else { return };
    let db = open(&url);
    on_worker(async { db_common::updates(&db.worker()).await });
}

#[test]
fn cached_queries() {
    let Some(url) = pg_url("db_postgres::cached_queries") else { return };
    let db = open(&url);
    on_worker(async { db_common::cached(&db.worker()).await });
}

#[test]
fn mix_async_and_blocking() {
    let Some(url) = pg_url("db_postgres::mix_async_and_blocking") else { return };
    let db = open(&url);
    on_worker(async { db_common::mix(&db.worker()).await });
}

#[test]
fn concurrent_updates_on_many_connections() {
    let Some(url) = pg_url("db_postgres::concurrent_updates_on_many_connections") else { return };
    let db = Database::open(&url, DbOptions { pg_connections_per_worker: 3, ..DbOptions::default() }).expect("open");
    on_worker(async {
        let w = db.worker();
        let calls = (0..30).map(|_| w.update_worlds(20));
        for result in futures_util::future::join_all(calls).await {
            assert_eq!(result.expect("update").len(), 20);
        }
    });
}

#[test]
fn pipelined_calls_each_get_their_own_rows() {
    let Some(url) = pg_url("db_postgres::pipelined_calls_each_get_their_own_rows") else { return };
    let db = open(&url);
    on_worker(async {
        let w = db.worker();
        // Many calls queued in the same turn share the connection and its Syncs.
        let asked: Vec<Vec<i32>> = (1..=300).map(|i| vec![i, 10_001 - i, (i * 37) % 10_000 + 1]).collect();
        let answers = futures_util::future::join_all(asked.iter().map(|ids| w.worlds_by_id(ids.clone()))).await;
        for (ids, answer) in asked.iter().zip(answers) {
            let got: Vec<i32> = answer.expect("worlds_by_id").iter().map(|w| w.id).collect();
            assert_eq!(&got, ids);
        }
        // A missing row fails its own call only.
        let (missing, present) =
            futures_util::future::join(w.worlds_by_id(vec![10_001]), w.worlds_by_id(vec![5])).await;
        assert!(missing.expect_err("missing row").to_string().contains("0 rows"));
        assert_eq!(present.expect("present row")[0].id, 5);
    });
}

#[test]
fn a_failing_statement_fails_its_call_and_the_connection_goes_on() {
    let Some(url) = pg_url("db_postgres::a_failing_statement_fails_its_call_and_the_connection_goes_on") else {
        return;
    };
    // Every statement longer than 100 ms is cancelled by the server; `/mix`'s long one sleeps 500 ms.
    let url = format!("{url}?options=-c%20statement_timeout%3D100");
    let options = DbOptions { long_query: Duration::from_millis(500), ..DbOptions::default() };
    let db = Database::open(&url, options).expect("open");
    on_worker(async {
        let w = db.worker();
        for _ in 0..3 {
            let e = w.mix(true).await.expect_err("cancelled by statement_timeout");
            assert_eq!(e.status(), 500, "{e}");
            assert!(e.to_string().contains("statement timeout"), "clear message: {e}");
            assert_eq!(w.mix(false).await.expect("short query").len(), 1);
            db_common::reads(&w).await;
        }
    });
}

#[test]
fn a_wrong_password_is_refused_with_a_clear_error() {
    let Some(url) = pg_url("db_postgres::a_wrong_password_is_refused_with_a_clear_error") else { return };
    let wrong = url.replacen(":benchmarkdbpass@", ":not-the-password@", 1);
    assert_ne!(wrong, url, "the test expects the scripts/pg credentials in {url}");
    let db = open(&wrong);
    on_worker(async {
        let e = db.worker().random_world().await.expect_err("wrong password");
        assert!(e.to_string().contains("password authentication failed"), "{e}");
    });
}

#[test]
fn connects_over_the_unix_socket() {
    let Some(url) = pg_url("db_postgres::connects_over_the_unix_socket") else { return };
    let Ok(dir) = std::env::var("KILN_PG_DIR") else {
        eprintln!("\n!!! SKIPPED db_postgres::connects_over_the_unix_socket: KILN_PG_DIR is not set.\n");
        return;
    };
    let port = std::fs::read_to_string(format!("{dir}/port")).expect("scripts/pg's port file");
    let socket_url = format!("postgres://benchmarkdbuser@/hello_world?host={dir}&port={}", port.trim());
    assert!(url.contains(&format!(":{}/", port.trim())), "the same cluster as {url}");
    let db = open(&socket_url);
    on_worker(async { db_common::reads(&db.worker()).await });
}

/// A cluster of its own, so that stopping it disturbs no other test.
struct Cluster {
    dir: String,
    url: String,
}

impl Cluster {
    fn script() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg")
    }

    fn start() -> Cluster {
        let out = Command::new(Self::script()).arg("start").output().expect("run scripts/pg start");
        assert!(out.status.success(), "scripts/pg start failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).expect("utf-8");
        let var = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")).map(str::to_owned))
                .unwrap_or_else(|| panic!("no {name} in {text}"))
        };
        Cluster { dir: var("KILN_PG_DIR"), url: var("KILN_PG_URL") }
    }

    fn run(&self, command: &str) {
        let status = Command::new(Self::script()).args([command, &self.dir]).status().expect("run scripts/pg");
        assert!(status.success(), "scripts/pg {command} failed");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Self::script()).args(["stop", &self.dir]).status();
    }
}

#[test]
fn outage_answers_503_then_recovers() {
    if pg_url("db_postgres::outage_answers_503_then_recovers").is_none() {
        return;
    }
    let cluster = Cluster::start();
    let options = DbOptions {
        query_timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(1),
        ..DbOptions::default()
    };
    let db = Database::open(&cluster.url, options).expect("open");
    on_worker(async {
        let w = db.worker();
        w.random_world().await.expect("up before the outage");
        assert_eq!(w.mix_blocking(false).expect("blocking client up").len(), 1);

        cluster.run("halt");
        // Every call during the outage fails fast with a 503-class error, never hangs.
        for _ in 0..20 {
            let start = std::time::Instant::now();
            let err = w.worlds(5).await.expect_err("server is down");
            assert!(err.is_unavailable(), "{err}");
            assert_eq!(err.status(), 503);
            assert!(start.elapsed() < Duration::from_secs(5), "a call during the outage hung");
        }
        let err = w.mix_blocking(false).expect_err("blocking client during the outage");
        assert!(err.is_unavailable(), "{err}");
        let message = err.to_string();
        assert!(message.contains("PostgreSQL") || matches!(err, DbError::Timeout), "clear message: {message}");

        cluster.run("resume");
        let back = poll_until(Duration::from_secs(30), || async { w.fortunes().await.ok() }).await;
        assert_eq!(back.expect("recovered within 30 s").len(), 12);
        db_common::updates(&w).await;
        let blocking = poll_until(Duration::from_secs(30), || async { w.mix_blocking(true).ok() }).await;
        assert_eq!(blocking.expect("blocking client recovered").len(), 2);
    });
}
