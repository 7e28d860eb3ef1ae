//! The SSE fan-out benchmark's endpoints (issue 23): `GET /bench/events` subscribes to
//! one bus topic as Server-Sent Events; `POST /bench/publish` publishes its body (the
//! load generator's send time) to that topic, so each subscriber's event carries the
//! moment it was published and the client measures the delivery time. Only public API:
//! the site's per-worker [`LocalBus`](kiln::realtime::LocalBus) and [`Sse`].

use kiln::realtime::{BusEvents, Sse};
use kiln::{App, Route, State, StatusCode};

use crate::state::Worker;

/// The one topic every benchmark subscriber listens to.
const TOPIC: &str = "bench/fanout";

/// Longest body `/bench/publish` republishes: a timestamp and a sequence number fit.
const MAX_PAYLOAD: usize = 256;

/// The subscribers' stream.
#[derive(Route)]
#[route("/bench/events")]
pub(crate) struct BenchEvents;

/// One publish to every subscriber.
#[derive(Route)]
#[route(POST, "/bench/publish")]
pub(crate) struct BenchPublish;

/// Adds the SSE benchmark's two routes.
pub(crate) fn mount(app: App<Worker>) -> App<Worker> {
    app.route(events).route(publish)
}

async fn events(_: BenchEvents, State(worker): State<Worker>) -> Sse<BusEvents> {
    // No keep-alive comments: the load generator reads events only.
    Sse::new(worker.site.bus.subscribe(TOPIC).events()).keep_alive(None)
}

/// Answers the message's id once it is handed to every local subscriber; 400 for a
/// payload the bus refuses or one longer than a timestamp needs.
async fn publish(_: BenchPublish, State(worker): State<Worker>, body: String) -> (StatusCode, String) {
    if body.len() > MAX_PAYLOAD {
        return (StatusCode::BAD_REQUEST, format!("at most {MAX_PAYLOAD} bytes\n"));
    }
    match worker.site.bus.publish(TOPIC, &body).await {
        Ok(id) => (StatusCode::OK, format!("{id}\n")),
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")),
    }
}
