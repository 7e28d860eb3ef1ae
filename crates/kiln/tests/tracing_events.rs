//! kiln speaks through `tracing`, not standard error: a subscriber of the app's own
//! sees the server start and stop, 5xx answers, CORS refusals and database outages;
//! with `App::request_spans` each request's events sit in a `request` span.

use std::sync::{Arc, Mutex};

use kiln::http::Server;
use kiln::test::TestClient;
use kiln::{App, Cors, Rejection, Route, StatusCode};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One event as the test sees it: target, level, message and fields, and the spans
/// it happened in (`name{field=value ...}`).
#[derive(Debug, Clone)]
struct Seen {
    target: String,
    level: tracing::Level,
    text: String,
    spans: Vec<String>,
}

#[derive(Default)]
struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        } else {
            self.0.push_str(&format!("{}={value:?}", field.name()));
        }
    }
}

/// The fields a span was opened with, kept in its extensions.
struct SpanText(String);

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Seen>>>, Arc<std::sync::atomic::AtomicUsize>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, cx: Context<'_, S>) {
        let mut text = Text::default();
        attrs.record(&mut text);
        if let Some(span) = cx.span(id) {
            span.extensions_mut().insert(SpanText(format!("{}{{{}}}", attrs.metadata().name(), text.0)));
        }
    }

    fn on_enter(&self, _: &Id, _: Context<'_, S>) {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn on_event(&self, event: &Event<'_>, cx: Context<'_, S>) {
        let mut text = Text::default();
        event.record(&mut text);
        let spans = cx
            .event_scope(event)
            .map(|scope| {
                scope.from_root().filter_map(|s| s.extensions().get::<SpanText>().map(|t| t.0.clone())).collect()
            })
            .unwrap_or_default();
        let meta = event.metadata();
        self.0.lock().unwrap().push(Seen {
            target: meta.target().to_owned(),
            level: *meta.level(),
            text: text.0,
            spans,
        });
    }
}

impl Capture {
    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut self.0.lock().unwrap())
    }

    /// Span enters so far.
    fn enters(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[derive(Route)]
#[route("/api/fail")]
struct Fail;

#[derive(Route)]
#[route("/api/db")]
struct DbDown;

async fn fail(_: Fail) -> (StatusCode, &'static str) {
    (StatusCode::BAD_GATEWAY, "upstream gone")
}

async fn db_down(_: DbDown) -> Result<&'static str, Rejection> {
    Err(kiln::db::Error::Unavailable("connection refused".into()))?
}

#[derive(Route)]
#[route("/api/slow")]
struct Slow;

/// Answers over several polls, with an event after each wake.
async fn slow(_: Slow) -> &'static str {
    for round in 0..3 {
        tokio::task::yield_now().await;
        tracing::info!(target: "app", round, "resumed");
    }
    "done"
}

fn app() -> App<()> {
    App::new(|_| ()).route(fail).route(db_down).route(slow).cors(Cors::new().allow_origins(["https://app.example"]))
}

#[test]
fn a_subscriber_sees_kilns_events() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));

    let serving = kiln::serve(app(), Server::new().listen("127.0.0.1:0").workers(1)).unwrap();
    let addr = serving.local_addr();
    serving.shutdown();
    serving.wait().unwrap();
    let seen = capture.take();
    let server: Vec<&str> = seen.iter().filter(|s| s.target == "kiln::server").map(|s| s.text.as_str()).collect();
    assert_eq!(server, [format!("serving on {addr}").as_str(), "stopped"], "{seen:?}");

    let mut c = TestClient::new(app());
    assert_eq!(c.get(&Fail).status(), 502);
    let refused = c
        .request("OPTIONS", &Fail)
        .header("Origin", "https://evil.example")
        .header("Access-Control-Request-Method", "DELETE")
        .send();
    assert_eq!(refused.status(), 403);
    assert_eq!(c.get(&DbDown).status(), 503);
    let seen = capture.take();
    let find = |target: &str| {
        seen.iter().find(|s| s.target == target).unwrap_or_else(|| panic!("no {target} event in {seen:?}")).clone()
    };
    let answered = find("kiln::request");
    assert_eq!(answered.level, tracing::Level::WARN);
    assert!(
        answered.text.contains("answered 502 Bad Gateway") && answered.text.contains("path=\"/api/fail\""),
        "{answered:?}"
    );
    let cors = find("kiln::cors");
    assert_eq!(cors.level, tracing::Level::WARN);
    assert!(cors.text.contains("CORS preflight refused: origin https://evil.example is not allowed"), "{cors:?}");
    let db = find("kiln::db");
    assert!(
        db.text.contains("database unavailable, answered 503: ") && db.text.contains("connection refused"),
        "{db:?}"
    );
    // Without spans asked for, none.
    assert!(seen.iter().all(|s| s.spans.is_empty()), "{seen:?}");
}

#[test]
fn request_spans_carry_the_method_and_path() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let mut c = TestClient::new(app().request_spans());
    assert_eq!(c.get(&Fail).status(), 502);
    let seen = capture.take();
    let answered = seen.iter().find(|s| s.target == "kiln::request").expect("the 5xx event");
    assert_eq!(answered.spans, [r#"request{method="GET" path="/api/fail"}"#], "{seen:?}");
}

#[test]
fn a_request_span_is_entered_on_every_poll_of_its_handler() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let mut c = TestClient::new(app().request_spans());
    assert_eq!(c.get(&Slow).text(), "done");
    let seen = capture.take();
    let resumed: Vec<&Seen> = seen.iter().filter(|s| s.target == "app").collect();
    assert_eq!(resumed.len(), 3, "{seen:?}");
    for event in resumed {
        assert_eq!(event.spans, [r#"request{method="GET" path="/api/slow"}"#], "{seen:?}");
    }
}

#[test]
fn a_request_answered_in_one_poll_enters_its_span_once() {
    // Each enter and exit is a call into the subscriber: the layers before the
    // handler, the handler and the layers after share one.
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let mut c = TestClient::new(app().request_spans());
    assert_eq!(c.get(&Fail).status(), 502);
    assert_eq!(capture.enters(), 1);
}

#[test]
fn a_request_span_is_a_root_whatever_span_is_entered_around_the_call() {
    // Issue 25: the request span is made with `parent: None`, so the registry does
    // not look up the thread's current span to be its parent (about 40 instructions
    // a request), and a span some other code left entered on the worker's thread
    // (an `Entered` guard held across an `.await`) cannot adopt every request after it.
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let mut c = TestClient::new(app().request_spans());
    let outer = tracing::info_span!("outer");
    let entered = outer.enter();
    assert_eq!(c.get(&Fail).status(), 502);
    drop(entered);
    let seen = capture.take();
    let answered = seen.iter().find(|s| s.target == "kiln::request").expect("the 5xx event");
    assert_eq!(answered.spans, [r#"request{method="GET" path="/api/fail"}"#], "{seen:?}");
}
