//! A chat room over WebSocket: `cargo run --example ws_chat`, then connect two
//! clients to `ws://127.0.0.1:3000/rooms/lobby` (`websocat`, or a browser's
//! `new WebSocket(...)`); each text message is said to everyone in the room.
//!
//! Each worker attaches to one [`Bus`], so the room spans every worker. A socket
//! hears the room (forwarding the bus to the socket) while it reads what its client
//! says (publishing it on the bus), whichever comes first; when either ends, or the
//! server shuts down, both do.

use kiln::realtime::{Bus, Lagged, LocalBus};
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
    ws.max_message(MAX_LINE).on_upgrade(move |mut socket| async move {
        let mut heard = bus.subscribe(&route.room);
        // Said once the socket hears the room: what it says from now on comes back.
        if socket.send(format!("joined {}", route.room)).await.is_err() {
            return;
        }
        // Both reads end when the server shuts down: the socket closes with 1001.
        loop {
            tokio::select! {
                heard = heard.recv() => {
                    let line = match heard {
                        Some(Ok(message)) => message.payload().to_owned(),
                        Some(Err(Lagged(missed))) => format!("({missed} messages missed)"),
                        None => break,
                    };
                    if socket.send(line).await.is_err() {
                        break;
                    }
                }
                said = socket.recv() => match said {
                    Some(Message::Text(line)) => {
                        if bus.publish(&route.room, &line).await.is_err() {
                            break;
                        }
                    }
                    Some(Message::Binary(_)) => {}
                    None => break,
                },
            }
        }
    })
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
