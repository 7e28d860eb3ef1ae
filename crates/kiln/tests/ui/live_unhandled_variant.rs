// A variant the view's `handle` does not handle does not compile.
use kiln::live::{Live, LiveView};
use kiln::{Rejection, RequestContext, Route, live_html};
use serde::{Deserialize, Serialize};

#[derive(Route)]
#[route("/counter")]
struct CounterPage;

#[derive(Serialize, Deserialize)]
enum Event {
    Increment,
    Reset,
}

#[derive(Serialize, Deserialize)]
enum OtherEvent {
    Delete,
}

struct Counter {
    count: u32,
}

impl LiveView for Counter {
    type AppState = ();
    type Route = CounterPage;
    type Event = Event;

    async fn mount(_: CounterPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Counter { count: 0 })
    }

    fn handle(&mut self, event: Event, _: &mut kiln::live::LiveSocket<Self>) {
        match event {
            Event::Increment => self.count += 1,
        }
    }

    fn render(&self) -> Live<Event> {
        live_html! {
            p { (self.count) }
            button type="button" on:click=(Event::Reset) { "reset" }
        }
    }
}

fn main() {}
