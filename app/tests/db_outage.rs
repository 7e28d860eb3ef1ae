//! PostgreSQL crashing under a loaded server: `503` with a clear message, never a
//! hang and never another status, then recovery once it is back, without a restart
//! of the server. Runs its own cluster (`scripts/pg`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kiln_test_support::{Cluster, Server, get, pg_url, poll_until};

/// Client threads loading the server throughout.
const CLIENTS: usize = 4;
/// Most requests one client sends, whatever happens.
const MAX_REQUESTS_PER_CLIENT: usize = 20_000;

#[test]
fn postgres_crash_under_load_answers_503_then_recovers() {
    if pg_url("db_outage::postgres_crash_under_load_answers_503_then_recovers").is_none() {
        return;
    }
    let cluster = Cluster::start();
    let server = Server::start(
        env!("CARGO_BIN_EXE_kiln-demo"),
        &["--workers", "2", "--database", &cluster.url, "--query-timeout-ms", "2000"],
    );
    assert_eq!(server.get("/db").status, 200);
    assert_eq!(server.get("/mix/blocking?every=1").status, 200);

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(BTreeMap::<u16, usize>::new()));
    let addr = server.addr;
    let load: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (stop, seen) = (Arc::clone(&stop), Arc::clone(&seen));
            std::thread::spawn(move || {
                let target = if i % 2 == 0 { "/queries?queries=5" } else { "/db" };
                for _ in 0..MAX_REQUESTS_PER_CLIENT {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let start = Instant::now();
                    let res = get(addr, target).expect("the server answers throughout");
                    assert!(start.elapsed() < Duration::from_secs(10), "{target} hung for {:?}", start.elapsed());
                    *seen.lock().expect("lock").entry(res.status).or_default() += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));

    cluster.run("crash");
    let down = poll_until(Duration::from_secs(30), || {
        let res = server.get("/fortunes");
        (res.status != 200).then_some(res)
    })
    .expect("an error once PostgreSQL is down");
    assert_eq!(down.status, 503, "{}", down.text());
    // The app's own 503 page (its `on_rejection` renders database errors too).
    assert!(down.text().contains("cannot reach its database"), "clear message: {}", down.text());
    assert_eq!(down.header("Retry-After"), Some("1"));
    for target in ["/db", "/updates?queries=3", "/mix/async", "/mix/blocking?every=1", "/cached-queries"] {
        let res = server.get(target);
        assert_eq!(res.status, 503, "{target}: {}", res.text());
    }

    cluster.run("resume");
    let back = poll_until(Duration::from_secs(30), || {
        let res = server.get("/fortunes");
        (res.status == 200).then_some(res)
    });
    assert!(back.expect("recovered within 30 s").text().contains("フレームワークのベンチマーク"));
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    for client in load {
        client.join().expect("a load thread");
    }
    for target in ["/db", "/queries?queries=20", "/updates?queries=20", "/mix/async?every=1"] {
        assert_eq!(server.get(target).status, 200, "{target}");
    }
    let blocking =
        poll_until(Duration::from_secs(30), || (server.get("/mix/blocking?every=1").status == 200).then_some(()));
    assert!(blocking.is_some(), "the blocking client recovered");
    let seen = seen.lock().expect("lock");
    assert!(seen.keys().all(|status| [200, 503].contains(status)), "only 200 and 503 under load: {seen:?}");
    assert!(seen.get(&503).is_some_and(|&n| n > 0) && seen.get(&200).is_some_and(|&n| n > 0), "{seen:?}");
}
