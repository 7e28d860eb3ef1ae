//! A chat room over WebSocket: `cargo run --example ws_chat`, then connect two
//! clients to `ws://127.0.0.1:3000/rooms/lobby` (`websocat`, or a browser's
//! `new WebSocket(...)`); each text message is said to everyone in the room.
//!
//! Each worker attaches to one [`Bus`], so the room spans every worker. A socket
//! hears the room (forwarding the bus to the socket) while it reads what its client
//! says (publishing it on the bus); when either ends, or the server shuts down,
//! both do.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;

use kiln::realtime::{Bus, Lagged, LocalBus, Stream};
use kiln::ws::{Message, WebSocketUpgrade};
use kiln::{App, IntoResponse, Route, State};

/// Most bytes one message of chat may have.
const MAX_LINE: usize = 1000;

#[derive(Route)]
#[route("/rooms/{room}")]
struct Room {
    room: String,
}

async fn room(route: Room, bus: State<LocalBus>, ws: WebSocketUpgrade) -> impl IntoResponse {
    let bus = LocalBus::clone(&bus);
    ws.max_message(MAX_LINE).on_upgrade(move |socket| async move {
        let (sender, mut receiver) = socket.split();
        let mut heard = bus.subscribe(&route.room);
        // Said once the socket hears the room: what it says from now on comes back.
        if sender.send(format!("joined {}", route.room)).await.is_err() {
            return;
        }
        let hear = async {
            while let Some(item) = poll_fn(|cx| Pin::new(&mut heard).poll_next(cx)).await {
                let line = match item {
                    Ok(message) => message.payload().to_owned(),
                    Err(Lagged(missed)) => format!("({missed} messages missed)"),
                };
                if sender.send(line).await.is_err() {
                    return;
                }
            }
        };
        let speak = async {
            while let Some(message) = receiver.recv().await {
                if let Message::Text(line) = message {
                    if bus.publish(&route.room, &line).await.is_err() {
                        return;
                    }
                }
            }
        };
        // Shutdown ends the conversation too, rather than waiting out the grace period.
        first_of(first_of(hear, speak), kiln::realtime::draining()).await;
    })
}

/// Runs both until either ends.
async fn first_of(a: impl Future<Output = ()>, b: impl Future<Output = ()>) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    poll_fn(|cx| {
        if a.as_mut().poll(cx).is_ready() || b.as_mut().poll(cx).is_ready() { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
}

/// The app: every worker on one bus.
pub(crate) fn app() -> App<LocalBus> {
    let bus = Bus::new();
    App::new(move |_worker| bus.attach()).route(room)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(), server)?.run_until_signal()?;
    Ok(())
}
