//! A counter whose state lives on the server: `cargo run --example live_counter`, then
//! open <http://127.0.0.1:3000/counter>. The first answer is the whole page (it reads
//! with JavaScript off); kiln's client script then connects it, each click goes to the
//! server as a typed event, and only the count comes back (`{"0":"1"}`). Open it in
//! two tabs: each has its own count, for as long as the tab is open.

use kiln::live::{Live, LiveSocket, LiveView};
use kiln::markup::{Document, ExternalUrl, Flow, Fragment, PreEscaped};
use kiln::{App, Key, Rejection, RequestContext, Route, html, live_html};
use serde::{Deserialize, Serialize};

/// Dims the view while its socket is down (the client script sets the class).
const STYLE: &str = ".kiln-disconnected { opacity: 0.5 }";

#[derive(Route)]
#[route("/counter")]
pub(crate) struct CounterPage;

/// What the page's buttons send.
#[derive(Serialize, Deserialize)]
pub(crate) enum Event {
    Increment,
    Decrement,
    Reset,
}

pub(crate) struct Counter {
    count: i64,
}

impl LiveView for Counter {
    type AppState = ();
    type Route = CounterPage;
    type Event = Event;

    async fn mount(_: CounterPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Counter { count: 0 })
    }

    fn handle(&mut self, event: Event, _: &mut LiveSocket<Self>) {
        match event {
            Event::Increment => self.count += 1,
            Event::Decrement => self.count -= 1,
            Event::Reset => self.count = 0,
        }
    }

    fn render(&self) -> Live<Event> {
        live_html! {
            p #count { "Count: " (self.count) }
            button #down type="button" on:click=(Event::Decrement) { "−1" }
            button #up type="button" on:click=(Event::Increment) { "+1" }
            @if self.count != 0 {
                button #reset type="button" on:click=(Event::Reset) { "Reset" }
            }
        }
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        html! {
            html lang="en" {
                head {
                    meta charset="utf-8";
                    title { "Live counter" }
                    // No icon, so that the browser asks for none.
                    link rel="icon" href=(ExternalUrl("data:,"));
                    style { (PreEscaped(STYLE)) }
                }
                body { h1 { "Live counter" } (view) }
            }
        }
    }
}

/// The app: the counter's page (and its socket) on `/counter`. Live pages sign their
/// socket's token with the app's key.
pub(crate) fn app(key: Key) -> App<()> {
    App::new(|_| ()).secret_key(key).live::<Counter>()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    // A real app reads its key from the environment or a file, so that open pages
    // reconnect across a restart; a generated one is for trying it out.
    let key = match std::env::var("KILN_SECRET_KEY") {
        Ok(secret) => Key::new(secret)?,
        Err(_) => Key::generate(),
    };
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(key), server)?.run_until_signal()?;
    Ok(())
}
