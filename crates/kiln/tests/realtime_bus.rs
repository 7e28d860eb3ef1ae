//! The bus within a process: every worker's subscribers get every message, a slow
//! subscriber is told it lagged, a reconnect is replayed from the window, and an
//! event stream forwards a subscription through a real server.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kiln::http::Server;
use kiln::realtime::{Bus, BusEvents, Lagged, LastEventId, LocalBus, Message, Sse, Stream, Subscription};
use kiln::{App, Route, State};
use kiln_test_support::{Streaming, on_worker, poll_until};

/// The next item, or `None` if the subscription has nothing now.
fn try_next(sub: &mut Subscription) -> Option<Result<Message, Lagged>> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match Pin::new(sub).poll_next(&mut cx) {
        std::task::Poll::Ready(item) => item,
        std::task::Poll::Pending => None,
    }
}

async fn next(sub: &mut Subscription) -> Result<Message, Lagged> {
    tokio::time::timeout(Duration::from_secs(10), sub.recv()).await.expect("a message in time").expect("not ended")
}

#[test]
fn subscription_recv_gets_published_messages_in_order_and_tells_a_lag() {
    // Issue 33, item 16: reading a subscription took `poll_fn` and `Pin`.
    on_worker(async {
        let bus = Bus::new().window(2).attach();
        let mut sub = bus.subscribe("room");
        let first = bus.publish("room", "one").await.unwrap();
        bus.publish("elsewhere", "not for this topic").await.unwrap();
        let m = sub.recv().await.unwrap().unwrap();
        assert_eq!((m.id(), m.topic(), m.payload()), (first, "room", "one"));
        // Nothing more yet: `recv` waits, and gives way to whatever comes first.
        tokio::select! {
            got = sub.recv() => panic!("nothing was published, got {got:?}"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        // A message published while a `recv` waits wakes it.
        let (got, sent) = tokio::join!(next(&mut sub), async {
            tokio::task::yield_now().await;
            bus.publish("room", "two").await.unwrap()
        });
        assert_eq!(got.unwrap().id(), sent);
        for n in 3..=6 {
            bus.publish("room", &n.to_string()).await.unwrap();
        }
        assert_eq!(sub.recv().await, Some(Err(Lagged(2))));
        assert_eq!(sub.recv().await.unwrap().unwrap().payload(), "5");
        assert_eq!(sub.recv().await.unwrap().unwrap().payload(), "6");
    });
}

#[test]
fn a_slow_subscriber_is_told_how_many_it_missed_and_goes_on_from_the_window() {
    on_worker(async {
        let bus = Bus::new().window(4).attach();
        let mut slow = bus.subscribe("t");
        let mut ids = Vec::new();
        for n in 1..=10 {
            ids.push(bus.publish("t", &format!("m{n}")).await.unwrap());
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids grow: {ids:?}");
        assert_eq!(try_next(&mut slow), Some(Err(Lagged(6))));
        let rest: Vec<_> = (0..4).map(|_| try_next(&mut slow).unwrap().unwrap().payload().to_owned()).collect();
        assert_eq!(rest, ["m7", "m8", "m9", "m10"]);
        assert_eq!(try_next(&mut slow), None);
    });
}

/// The next event of a [`BusEvents`], or `None` if it has nothing now.
fn try_next_event(events: &mut BusEvents) -> Option<kiln::realtime::Event> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match Pin::new(events).poll_next(&mut cx) {
        std::task::Poll::Ready(item) => item,
        std::task::Poll::Pending => None,
    }
}

#[test]
fn a_message_is_rendered_as_an_event_once_and_every_subscriber_sends_the_same_bytes() {
    // Issue 23: each of ten thousand subscribers rendered the event again (the id
    // formatted, the data split into lines, a string built and freed per subscriber).
    on_worker(async {
        let bus = Bus::new().window(4).attach();
        let mut streams: Vec<BusEvents> = (0..3).map(|_| bus.subscribe("t").events()).collect();
        let id = bus.publish("t", "one\ntwo").await.unwrap();
        let events: Vec<_> = streams.iter_mut().map(|s| try_next_event(s).expect("an event")).collect();
        assert_eq!(events[0].as_str(), format!("id: {id}\ndata: one\ndata: two\n\n"));
        for event in &events[1..] {
            assert_eq!(event, &events[0]);
            assert_eq!(event.as_str().as_ptr(), events[0].as_str().as_ptr(), "the same bytes, not a copy");
        }
        // A field added to a shared event changes that event alone.
        let more = events[1].clone().event("note");
        assert!(more.as_str().ends_with("event: note\n\n"));
        assert_eq!(events[2].as_str(), events[0].as_str());
        assert!(streams.iter_mut().all(|s| try_next_event(s).is_none()));
    });
}

#[test]
fn a_resume_replays_what_came_after_the_last_event_id_from_the_window() {
    on_worker(async {
        let bus = Bus::new().window(4).attach();
        let mut ids = Vec::new();
        for n in 1..=5 {
            ids.push(bus.publish("t", &format!("m{n}")).await.unwrap());
        }
        // Saw the third: gets the fourth and fifth, then what comes next.
        let mut resumed = bus.resume("t", Some(ids[2]));
        assert_eq!(next(&mut resumed).await.unwrap().payload(), "m4");
        assert_eq!(next(&mut resumed).await.unwrap().payload(), "m5");
        assert_eq!(try_next(&mut resumed), None);
        bus.publish("t", "m6").await.unwrap();
        assert_eq!(next(&mut resumed).await.unwrap().payload(), "m6");
        // Saw the first, which the window of 4 has dropped: told so, then the window.
        let mut late = bus.resume("t", Some(ids[0]));
        assert_eq!(try_next(&mut late), Some(Err(Lagged(0))));
        assert_eq!(next(&mut late).await.unwrap().payload(), "m3");
        // Another topic is not mixed in; a fresh subscriber starts from now.
        bus.publish("other", "x").await.unwrap();
        let mut fresh = bus.subscribe("t");
        assert_eq!(try_next(&mut fresh), None);
    });
}

#[test]
fn bad_topics_and_payloads_are_refused() {
    on_worker(async {
        let bus = Bus::new().attach();
        for (topic, payload) in [("", "x"), ("a\nb", "x"), ("a", "nul\0"), (&*"t".repeat(201), "x")] {
            assert!(bus.publish(topic, payload).await.is_err(), "{topic:?} {payload:?}");
        }
    });
}

#[derive(Route)]
#[route("/events/{topic}")]
struct Events {
    topic: String,
}

#[derive(Route)]
#[route(POST, "/publish/{topic}")]
struct Publish {
    topic: String,
}

/// A worker's state: its bus handle and its index.
#[derive(Clone)]
struct Worker(LocalBus, usize);

async fn events(
    e: Events,
    w: State<Worker>,
    last: Option<LastEventId>,
) -> (kiln::Header<&'static str, String>, Sse<BusEvents>) {
    let sub = w.0.0.resume(&e.topic, last.and_then(|id| id.parse()));
    (kiln::Header("X-Worker", w.0.1.to_string()), Sse::new(sub.events()))
}

async fn publish(p: Publish, w: State<Worker>, body: String) -> String {
    let id = w.0.0.publish(&p.topic, &body).await.unwrap();
    format!("{id} {}", w.0.1)
}

#[derive(Route)]
#[route("/until-shutdown/{topic}")]
struct UntilShutdown {
    topic: String,
}

/// Requests of `until_shutdown` that have subscribed, and the messages they heard.
static SUBSCRIBED: AtomicUsize = AtomicUsize::new(0);
static HEARD: AtomicUsize = AtomicUsize::new(0);

/// Reads the topic until its subscription ends, and says how many it heard.
async fn until_shutdown(u: UntilShutdown, w: State<Worker>) -> String {
    let mut sub = w.0.0.subscribe(&u.topic);
    SUBSCRIBED.fetch_add(1, Ordering::SeqCst);
    let mut heard = 0;
    while let Some(item) = sub.recv().await {
        heard += usize::from(item.is_ok());
        HEARD.fetch_add(1, Ordering::SeqCst);
    }
    format!("ended after {heard}")
}

fn start(workers: usize) -> kiln::Serving {
    let bus = Bus::new();
    let app = App::new(move |index| Worker(bus.attach(), index)).route(events).route(publish).route(until_shutdown);
    kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(workers)).unwrap()
}

fn post(serving: &kiln::Serving, topic: &str, body: &str) -> (u64, usize) {
    let raw = format!(
        "POST /publish/{topic} HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let reply = kiln_test_support::request(serving.local_addr(), &raw).unwrap();
    let parsed = reply.text().split_once(' ').and_then(|(id, worker)| Some((id.parse().ok()?, worker.parse().ok()?)));
    parsed.unwrap_or_else(|| panic!("publish answered {}: {}", reply.status, reply.text()))
}

#[test]
fn a_message_published_on_one_worker_reaches_subscribers_on_every_worker() {
    let serving = start(2);
    // Connections spread over the workers by the kernel: open until both have some.
    let mut subscribers = Vec::new();
    let mut workers = HashSet::new();
    while workers.len() < 2 {
        assert!(subscribers.len() < 64, "every connection went to one worker");
        let mut s = Streaming::open(serving.local_addr(), "GET /events/news HTTP/1.1\r\nHost: a\r\n\r\n");
        let head = s.read_until("\r\n\r\n");
        let worker = head.lines().find_map(|l| l.strip_prefix("X-Worker: ")).unwrap().to_owned();
        workers.insert(worker);
        subscribers.push(s);
    }
    // Publish until it has been done from each worker.
    let mut from = HashSet::new();
    let mut n = 0;
    while from.len() < 2 {
        assert!(n < 64, "every publish went to one worker");
        n += 1;
        let (id, worker) = post(&serving, "news", &format!("item {n}"));
        from.insert(worker);
        for s in &mut subscribers {
            let event = s.read_until("\n\n");
            assert!(event.ends_with(&format!("id: {id}\ndata: item {n}\n\n")), "{event:?}");
        }
    }
    serving.shutdown();
    serving.wait().unwrap();
}

#[test]
fn an_event_stream_that_reconnects_with_last_event_id_gets_what_it_missed() {
    let serving = start(1);
    let (first, _) = post(&serving, "log", "one");
    post(&serving, "log", "two");
    post(&serving, "log", "three");
    let raw = format!("GET /events/log HTTP/1.1\r\nHost: a\r\nLast-Event-ID: {first}\r\n\r\n");
    let mut s = Streaming::open(serving.local_addr(), &raw);
    s.read_until("\r\n\r\n");
    assert!(s.read_until("\n\n").ends_with("data: two\n\n"));
    assert!(s.read_until("\n\n").ends_with("data: three\n\n"));
    post(&serving, "log", "four");
    assert!(s.read_until("\n\n").ends_with("data: four\n\n"));
    serving.shutdown();
    serving.wait().unwrap();
}

#[test]
fn subscription_recv_returns_none_when_the_server_shuts_down() {
    let serving = start(1);
    let addr = serving.local_addr();
    let waiting = std::thread::spawn(move || kiln_test_support::get(addr, "/until-shutdown/quiet"));
    poll_until(Duration::from_secs(10), || (SUBSCRIBED.load(Ordering::SeqCst) == 1).then_some(()))
        .expect("the request subscribed");
    post(&serving, "quiet", "heard");
    poll_until(Duration::from_secs(10), || (HEARD.load(Ordering::SeqCst) == 1).then_some(())).expect("heard");
    serving.shutdown();
    // The loop over `recv` ended with the drain, so the handler answered within the
    // grace period instead of being cut.
    let reply = waiting.join().unwrap().expect("an answer");
    assert_eq!((reply.status, reply.text()), (200, "ended after 1"));
    serving.wait().unwrap();
}
