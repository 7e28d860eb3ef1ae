//! A chat room as a live view: `cargo run --example live_chat`, then open
//! <http://127.0.0.1:3000/chat/lobby> in two tabs. A line said in one appears in both:
//! the view publishes it on the [`Bus`] (every worker's views of the room hear it),
//! and each view, subscribed when its page connected, appends it; the page is sent
//! that one line, as a keyed insert. A line the bus refuses is shown to its sender.

use std::hash::{DefaultHasher, Hash, Hasher};

use kiln::live::{HandleInfo, Live, LiveSocket, LiveView};
use kiln::markup::{Document, ExternalUrl, Flow, Fragment, PreEscaped};
use kiln::realtime::{Bus, LocalBus, Message};
use kiln::{App, Key, Rejection, RequestContext, Route, html, live_html};
use serde::Deserialize;

/// Lines a page keeps; older ones scroll away.
const KEEP: usize = 50;
/// Most characters of one line.
const MAX_LINE: usize = 500;

/// Dims the view while its socket is down (the client script sets the class).
const STYLE: &str = ".kiln-disconnected { opacity: 0.5 }";

#[derive(Route)]
#[route("/chat/{room}")]
pub(crate) struct ChatPage {
    room: String,
}

/// The form's one field.
#[derive(Deserialize)]
pub(crate) struct Line {
    text: String,
}

/// What the page sends: a line, from the form.
#[derive(Deserialize)]
pub(crate) enum Event {
    Say(Line),
}

pub(crate) struct Chat {
    bus: LocalBus,
    room: String,
    /// The lines heard since the page opened, by their bus id.
    lines: Vec<(u64, String)>,
    /// The last line this page said was refused by the bus (a room name over its limit).
    refused: bool,
}

/// Whether the bus took a line this page said.
pub(crate) struct Said(bool);

impl LiveView for Chat {
    type AppState = LocalBus;
    type Route = ChatPage;
    type Event = Event;

    async fn mount(page: ChatPage, cx: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Chat { bus: LocalBus::clone(cx.state()), room: page.room, lines: Vec::new(), refused: false })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.subscribe::<Message>(self.bus.subscribe(&self.room));
    }

    fn handle(&mut self, Event::Say(line): Event, socket: &mut LiveSocket<Self>) {
        let text: String = line.text.trim().chars().take(MAX_LINE).collect();
        if text.is_empty() {
            return;
        }
        // Heard back through the subscription, as every other view of the room hears
        // it; what comes back here is only whether the bus took it.
        let (bus, room) = (self.bus.clone(), self.room.clone());
        socket.spawn(async move { Said(bus.publish(&room, &text).await.is_ok()) });
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        html! {
            html lang="en" {
                head {
                    meta charset="utf-8";
                    title { "Chat" }
                    // No icon, so that the browser asks for none.
                    link rel="icon" href=(ExternalUrl("data:,"));
                    style { (PreEscaped(STYLE)) }
                }
                body { (view) }
            }
        }
    }

    // Every page of a room that heard the same lines renders the same: a message to
    // the room is rendered once per worker, not once per page. The key hashes what
    // `render` reads (the room, the lines by their bus ids, the refusal).
    fn render_key(&self) -> Option<u64> {
        let first = self.lines.first().map(|(id, _)| *id);
        let last = self.lines.last().map(|(id, _)| *id);
        Some(hash(&(&self.room, first, last, self.lines.len(), self.refused)))
    }

    fn render(&self) -> Live<Event> {
        live_html! {
            h1 { "#" (self.room) }
            ul #lines {
                @for (id, text) in &self.lines; key = id { li { (text) } }
            }
            @if self.refused { p.error { "That line could not be sent." } }
            // `data-kiln-reset`: the client script empties the form once it is sent.
            form on:submit=(Event::Say) data-kiln-reset="" {
                input name="text" autocomplete="off" required placeholder="Say something";
                button { "Send" }
            }
        }
    }
}

impl HandleInfo<Message> for Chat {
    fn handle_info(&mut self, message: Message, _: &mut LiveSocket<Self>) {
        self.lines.push((message.id(), message.payload().to_owned()));
        if self.lines.len() > KEEP {
            self.lines.remove(0);
        }
    }
}

impl HandleInfo<Said> for Chat {
    fn handle_info(&mut self, Said(taken): Said, _: &mut LiveSocket<Self>) {
        self.refused = !taken;
    }
}

fn hash(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// The app: every worker on one bus, so that a room spans them all.
pub(crate) fn app(key: Key) -> App<LocalBus> {
    let bus = Bus::new();
    App::new(move |_| bus.attach()).secret_key(key).live::<Chat>()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let key = match std::env::var("KILN_SECRET_KEY") {
        Ok(secret) => Key::new(secret)?,
        Err(_) => Key::generate(),
    };
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(key), server)?.run_until_signal()?;
    Ok(())
}
