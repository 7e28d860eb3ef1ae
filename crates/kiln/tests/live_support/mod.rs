//! What the live view tests over a socket and over an event stream share: the hang
//! guard, reading a page's token, and a view whose every change is 8 KiB (for a page
//! that stops reading). Each test file includes it with `mod live_support;`.

// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::time::Duration;

use kiln::live::{Limits, Live, LiveSocket, LiveView};
use kiln::realtime::LocalBus;
use kiln::test::TestClient;
use kiln::{AppService, Rejection, RequestContext, Route, live_html};
use serde::{Deserialize, Serialize};

/// A hang guard only: every wait ends as soon as its message arrives.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// The token the page at `page` was rendered with.
pub(crate) fn token_of<S: 'static>(client: &mut TestClient<AppService<S>>, page: &str) -> String {
    let html = client.get(page).text();
    let rest = html.split_once("data-kiln-token=\"").expect("a live page has a token").1;
    rest.split_once('"').expect("the token ends").0.to_owned()
}

/// The page of [`Big`].
#[derive(Route)]
#[route("/big")]
pub(crate) struct BigPage;

/// [`Big`]'s one event (`{"event":"Increment"}`).
#[derive(Serialize, Deserialize)]
pub(crate) enum BigEvent {
    Increment,
}

/// A view whose every change is 8 KiB, for a page that stops reading.
pub(crate) struct Big {
    count: u32,
}

impl LiveView for Big {
    type AppState = LocalBus;
    type Route = BigPage;
    type Event = BigEvent;

    const LIMITS: Limits = Limits { event_burst: 10_000, events_per_second: 10_000, ..Limits::DEFAULT };

    async fn mount(_: BigPage, _: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Big { count: 0 })
    }

    fn handle(&mut self, BigEvent::Increment: BigEvent, _: &mut LiveSocket<Self>) {
        self.count += 1;
    }

    fn render(&self) -> Live<BigEvent> {
        let pad = format!("{:08}", self.count).repeat(1024);
        live_html! { p { (self.count) } pre { (pad) } }
    }
}
