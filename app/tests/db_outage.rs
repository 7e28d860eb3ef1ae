//! PostgreSQL stopped under a running server: `503` with a clear message, never a
//! hang, then recovery once it is back. Runs its own cluster (`scripts/pg`).

use std::time::{Duration, Instant};

use kiln_test_support::{Cluster, Server, pg_url, poll_until};

#[test]
fn postgres_outage_answers_503_then_recovers() {
    if pg_url("db_outage::postgres_outage_answers_503_then_recovers").is_none() {
        return;
    }
    let cluster = Cluster::start();
    let server = Server::start(
        env!("CARGO_BIN_EXE_kiln-demo"),
        &["--workers", "2", "--database", &cluster.url, "--query-timeout-ms", "2000"],
    );
    assert_eq!(server.get("/db").status, 200);
    assert_eq!(server.get("/mix/blocking?every=1").status, 200);

    cluster.run("halt");
    let down = poll_until(Duration::from_secs(30), || {
        let res = server.get("/queries?queries=5");
        (res.status != 200).then_some(res)
    })
    .expect("an error once PostgreSQL is down");
    assert_eq!(down.status, 503, "{}", down.text());
    assert!(down.text().contains("database unavailable"), "clear message: {}", down.text());
    for target in ["/db", "/fortunes", "/updates?queries=3", "/mix/async", "/mix/blocking?every=1", "/cached-queries"] {
        let start = Instant::now();
        let res = server.get(target);
        assert_eq!(res.status, 503, "{target}: {}", res.text());
        assert!(start.elapsed() < Duration::from_secs(10), "{target} hung for {:?}", start.elapsed());
    }

    cluster.run("resume");
    let back = poll_until(Duration::from_secs(30), || {
        let res = server.get("/fortunes");
        (res.status == 200).then_some(res)
    });
    assert!(back.expect("recovered within 30 s").text().contains("フレームワークのベンチマーク"));
    for target in ["/db", "/queries?queries=20", "/updates?queries=20", "/mix/async?every=1"] {
        assert_eq!(server.get(target).status, 200, "{target}");
    }
    let blocking =
        poll_until(Duration::from_secs(30), || (server.get("/mix/blocking?every=1").status == 200).then_some(()));
    assert!(blocking.is_some(), "the blocking client recovered");
}
