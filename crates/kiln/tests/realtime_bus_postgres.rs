//! The bus across processes through PostgreSQL `LISTEN`/`NOTIFY`: two buses on one
//! database stand for two kiln processes. Runs against `scripts/pg` (`KILN_PG_URL`).
#![cfg(feature = "postgres")]

use std::future::poll_fn;
use std::pin::Pin;
use std::time::Duration;

use kiln::db::{Database, Options};
use kiln::realtime::{Bus, Lagged, LocalBus, Message, Stream, Subscription};
use kiln_test_support::{on_worker, pg_url};

async fn next(sub: &mut Subscription) -> Result<Message, Lagged> {
    let item = poll_fn(|cx| Pin::new(&mut *sub).poll_next(cx));
    tokio::time::timeout(Duration::from_secs(10), item).await.expect("a message in time").expect("never ends")
}

/// Waits (at most ten seconds) until `bus`'s link to the database is up.
async fn up(bus: &LocalBus) {
    for _ in 0..200 {
        if bus.publish("warming-up", "").await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the bus's link never came up");
}

/// A channel of the test's own, so that tests running at once do not hear each other.
fn channel(test: &str) -> String {
    format!("kiln_bus_{test}_{}", std::process::id())
}

#[test]
fn a_message_published_in_one_process_reaches_subscribers_in_another_large_ones_too() {
    let Some(url) = pg_url("realtime_bus_postgres") else { return };
    let db = Database::open(&url, Options::default()).unwrap();
    let ch = channel("share");
    let (one, two) = (Bus::postgres(&db, &ch).unwrap(), Bus::postgres(&db, &ch).unwrap());
    on_worker(async {
        let (one, two) = (one.attach(), two.attach());
        let mut here = one.subscribe("page");
        let mut there = two.subscribe("page");
        let mut other_topic = two.subscribe("elsewhere");
        // The links connect in the background: publish once both answer.
        up(&one).await;
        up(&two).await;
        let first = two.publish("page", "hello").await.unwrap();
        // A payload past NOTIFY's 8000 bytes goes through the table, and keeps its place.
        let big = format!("{}é\nend", "x".repeat(20_000));
        let big_id = one.publish("page", &big).await.unwrap();
        let last = two.publish("page", "after").await.unwrap();
        assert!(first < big_id && big_id < last);
        for sub in [&mut here, &mut there] {
            // A subscriber made before the link was up may see the first publish or not;
            // every later one arrives, in order.
            let mut m = next(sub).await.unwrap();
            if m.id() == first {
                assert_eq!(m.payload(), "hello");
                m = next(sub).await.unwrap();
            }
            assert_eq!((m.id(), m.payload()), (big_id, big.as_str()));
            let m = next(sub).await.unwrap();
            assert_eq!((m.id(), m.payload(), m.topic()), (last, "after", "page"));
        }
        two.publish("elsewhere", "x").await.unwrap();
        assert_eq!(next(&mut other_topic).await.unwrap().payload(), "x");
    });
}

#[test]
fn the_link_listens_again_after_its_connection_is_killed_and_says_what_was_missed() {
    let Some(url) = pg_url("realtime_bus_postgres") else { return };
    let db = Database::open(&url, Options::default()).unwrap();
    let ch = channel("reconnect");
    let bus = Bus::postgres(&db, &ch).unwrap();
    on_worker(async {
        let bus = bus.attach();
        let mut sub = bus.subscribe("t");
        let publish = |payload: &'static str| {
            let bus = bus.clone();
            async move {
                for _ in 0..200 {
                    if let Ok(id) = bus.publish("t", payload).await {
                        return id;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                panic!("the link never came back");
            }
        };
        let before = publish("before").await;
        assert_eq!(next(&mut sub).await.unwrap().id(), before);

        let admin = db.worker();
        let sql = format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'kiln_bus:{ch}'"
        );
        let (killed,): (i64,) = admin.query_one(&sql, &[]).await.unwrap();
        assert_eq!(killed, 1);

        // Back: the subscriber learns that messages may have been missed meanwhile,
        // then gets what is published from now on.
        assert_eq!(next(&mut sub).await, Err(Lagged(0)));
        let after = publish("after").await;
        let m = next(&mut sub).await.unwrap();
        assert_eq!((m.id(), m.payload()), (after, "after"));
    });
}
