//! The bus across processes through PostgreSQL `LISTEN`/`NOTIFY`: two buses on one
//! database stand for two kiln processes. Runs against `scripts/pg` (`KILN_PG_URL`).
#![cfg(feature = "postgres")]

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use kiln::db::{Database, Options};
use kiln::realtime::{Bus, Lagged, LocalBus, Message, PostgresBus, Subscription};
use kiln_test_support::{on_worker, pg_url};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

async fn next(sub: &mut Subscription) -> Result<Message, Lagged> {
    tokio::time::timeout(Duration::from_secs(10), sub.recv()).await.expect("a message in time").expect("never ends")
}

/// The `kiln::db` events of every thread (the link runs on one of its own) as
/// `LEVEL message`, from a subscriber installed once for this test binary.
fn db_events() -> Arc<Mutex<Vec<String>>> {
    struct Capture(Arc<Mutex<Vec<String>>>);
    struct Text(String);
    impl tracing::field::Visit for Text {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            self.0.push_str(&format!(" {}={value:?}", field.name()));
        }
    }
    impl<S: tracing::Subscriber> Layer<S> for Capture {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            if event.metadata().target() == "kiln::db" {
                let mut text = Text(event.metadata().level().to_string());
                event.record(&mut text);
                self.0.lock().unwrap().push(text.0);
            }
        }
    }
    static EVENTS: OnceLock<Arc<Mutex<Vec<String>>>> = OnceLock::new();
    Arc::clone(EVENTS.get_or_init(|| {
        let events = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Capture(Arc::clone(&events)));
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        events
    }))
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
    let events = db_events();
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
    // Diagnostics: the lost link is told through `tracing` (issue 33, item 8), not
    // written to standard error, naming its channel.
    let events = events.lock().unwrap();
    let told = events.iter().find(|e| e.contains("the bus's link to PostgreSQL failed")).expect("an event");
    assert!(told.starts_with("WARN") && told.contains("reconnecting") && told.contains(&ch), "{told}");
}

#[test]
fn bus_postgres_keeps_large_payloads_in_the_table_the_app_names() {
    let Some(url) = pg_url("realtime_bus_postgres") else { return };
    let db = Database::open(&url, Options::default()).unwrap();
    let ch = channel("named");
    let schema = format!("kt_bus_{}", std::process::id());
    let table = format!("{schema}.chat");
    on_worker(async {
        let admin = db.worker();
        admin.execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"), &[]).await.unwrap();
        admin.execute(&format!("CREATE SCHEMA {schema}"), &[]).await.unwrap();
    });
    let bus = Bus::postgres(&db, PostgresBus::new(&ch).table(&table).window(4)).unwrap();
    on_worker(async {
        let bus = bus.attach();
        let mut sub = bus.subscribe("room");
        up(&bus).await;
        let big = "y".repeat(10_000);
        let id = bus.publish("room", &big).await.unwrap();
        loop {
            let m = next(&mut sub).await.unwrap();
            if m.id() == id {
                assert_eq!(m.payload(), big);
                break;
            }
        }
        let admin = db.worker();
        let sql = format!("SELECT count(*) FROM {table} WHERE id = $1");
        let (stored,): (i64,) = admin.query_one(&sql, &[&i64::try_from(id).unwrap()]).await.unwrap();
        assert_eq!(stored, 1, "the payload is in the table the app named");
        let sql = "SELECT to_regclass($1)::text IS NULL, to_regclass($2)::text IS NOT NULL";
        let ids = format!("{table}_ids");
        let (default_absent, sequence_present): (bool, bool) =
            admin.query_one(sql, &[&format!("{ch}_payloads"), &ids]).await.unwrap();
        assert!(default_absent && sequence_present);
        admin.execute(&format!("DROP SCHEMA {schema} CASCADE"), &[]).await.unwrap();
    });
}

#[test]
fn bus_postgres_refuses_a_table_name_that_is_no_sql_identifier() {
    let Some(url) = pg_url("realtime_bus_postgres") else { return };
    let db = Database::open(&url, Options::default()).unwrap();
    for bad in ["chat; DROP TABLE users", "Chat", "9chat", "a.b.c", "", &"t".repeat(60)] {
        let refused = Bus::postgres(&db, PostgresBus::new("kiln_bus_refused").table(bad)).unwrap_err();
        let text = refused.to_string();
        assert!(matches!(refused, kiln::db::Error::Open(_)) && text.contains("bus table"), "{bad:?}: {text}");
    }
    let refused = Bus::postgres(&db, "Not-A-Channel").unwrap_err();
    assert!(refused.to_string().contains("bus channel"), "{refused}");
}
