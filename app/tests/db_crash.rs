//! The SQLite file survives `kill -9` of the server in the middle of writes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kiln_test_support::{Server, TempDir, get, poll_until};

/// Client threads hammering `/updates`.
const CLIENTS: usize = 4;
/// Most requests one client sends, whatever happens.
const MAX_REQUESTS_PER_CLIENT: usize = 5_000;
/// Successful updates to see before the kill, so that it lands mid-stream.
const UPDATES_BEFORE_KILL: usize = 500;

fn start(database: &str) -> Server {
    Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &["--workers", "2", "--database", database])
}

#[test]
fn sqlite_survives_kill_9_during_updates() {
    let dir = TempDir::new("crash");
    let url = dir.sqlite_url();
    let mut server = start(&url);
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
            std::thread::spawn(move || {
                for _ in 0..MAX_REQUESTS_PER_CLIENT {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    match get(addr, "/updates?queries=20") {
                        Ok(res) if res.status == 200 => drop(done.fetch_add(1, Ordering::Relaxed)),
                        Ok(res) => panic!("update failed before the kill: {} {}", res.status, res.text()),
                        // The server is gone: the kill has happened.
                        Err(_) => break,
                    }
                }
            })
        })
        .collect();
    let reached =
        poll_until(Duration::from_secs(120), || (done.load(Ordering::Relaxed) >= UPDATES_BEFORE_KILL).then_some(()));
    assert!(reached.is_some(), "only {} updates in 120 s", done.load(Ordering::Relaxed));
    server.child.kill().expect("kill -9"); // SIGKILL: no chance to clean up
    server.child.wait().expect("reap");
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.join().expect("client thread");
    }

    let path = dir.path().join("kiln.sqlite");
    let conn = rusqlite::Connection::open(&path).expect("open after the crash");
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("integrity_check");
    assert_eq!(check, "ok");
    let (rows, bad): (i64, i64) = conn
        .query_row(
            "SELECT count(*), count(*) FILTER (WHERE randomnumber NOT BETWEEN 1 AND 10000) FROM world",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("count");
    assert_eq!((rows, bad), (10_000, 0));
    drop(conn);

    // And the server starts again on the same file.
    let server = start(&url);
    assert_eq!(server.get("/updates?queries=5").status, 200);
    assert_eq!(server.get("/db").status, 200);
}
