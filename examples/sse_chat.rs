//! A chat room over Server-Sent Events: `cargo run --example sse_chat`, then listen
//! in one terminal and talk in another:
//!
//! ```sh
//! curl -N http://127.0.0.1:3000/rooms/lobby/events
//! curl -d 'hello, lobby' http://127.0.0.1:3000/rooms/lobby
//! ```
//!
//! Each worker attaches to one [`Bus`], so a line posted to any worker reaches every
//! listener on every worker. A listener that reconnects with `Last-Event-ID` (browsers'
//! `EventSource` does it by itself) gets the lines it missed, as far as the bus's
//! window goes back.

use kiln::realtime::{Bus, BusEvents, LastEventId, LocalBus, Sse};
use kiln::rejection::{InvalidBody, Rejection};
use kiln::{App, Route, State};

/// Most bytes one line of chat may have.
const MAX_LINE: usize = 1000;

#[derive(Route)]
#[route("/rooms/{room}/events")]
struct Listen {
    room: String,
}

#[derive(Route)]
#[route(POST, "/rooms/{room}")]
struct Say {
    room: String,
}

/// Every line said in `room`, from now on (or since `Last-Event-ID`), as events.
async fn listen(route: Listen, bus: State<LocalBus>, last: Option<LastEventId>) -> Sse<BusEvents> {
    let from = last.and_then(|id| id.parse());
    Sse::new(bus.resume(&route.room, from).events())
}

/// Says the body's line in `room`; answers with the line's event id.
async fn say(route: Say, bus: State<LocalBus>, line: String) -> Result<String, Rejection> {
    let line = line.trim();
    if line.is_empty() || line.len() > MAX_LINE || line.contains(['\r', '\n']) {
        return Err(InvalidBody::new(format!("a line is 1 to {MAX_LINE} bytes, with no line break")).into());
    }
    let id = bus.publish(&route.room, line).await.map_err(|e| InvalidBody::new(e.to_string()))?;
    Ok(id.to_string())
}

/// The app: every worker on one bus.
pub(crate) fn app() -> App<LocalBus> {
    let bus = Bus::new();
    App::new(move |_worker| bus.attach()).route(listen).route(say)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(), server)?.run_until_signal()?;
    Ok(())
}
