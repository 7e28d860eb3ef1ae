//! The counter page: one count shared by every open view. `POST
//! /bench/live/counter/bump` (or a view's own button) adds one and publishes the new
//! count on the bus; each view, subscribed once its page connected, shows it. The idle
//! view of the memory measurement: its state is the count and its bus handle. The count
//! is the view's render key.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use kiln::live::{HandleInfo, Live, LiveSocket, LiveView};
use kiln::markup::{Document, Flow, Fragment};
use kiln::realtime::{LocalBus, Message};
use kiln::{Rejection, RequestContext, Route, State, live_html};
use serde::{Deserialize, Serialize};

use super::BenchState;

/// The bus topic of new counts.
const TOPIC: &str = "bench/live/counter";

/// The count every view shows, shared by the app's workers.
static COUNT: AtomicU64 = AtomicU64::new(0);

/// The page.
#[derive(Route)]
#[route("/bench/live/counter")]
pub(crate) struct CounterPage;

/// The trigger: the count plus one.
#[derive(Route)]
#[route(POST, "/bench/live/counter/bump")]
pub(crate) struct Bump;

/// What the page sends.
#[derive(Serialize, Deserialize)]
pub(crate) enum Event {
    Bump,
}

/// What a count renders as: the view's markup, and the floor's.
pub(crate) fn render(count: u64) -> Live<Event> {
    live_html! {
        p { "Count: " (count) }
        button type="button" on:click=(Event::Bump) { "+1" }
    }
}

/// One open counter.
pub(crate) struct Counter<S> {
    bus: LocalBus,
    count: u64,
    state: PhantomData<fn() -> S>,
}

/// A bump the view's own button started has been published (or refused: the count
/// then stays as it was, and the view with it).
pub(crate) struct Bumped;

impl<S: BenchState> LiveView for Counter<S> {
    type AppState = S;
    type Route = CounterPage;
    type Event = Event;

    async fn mount(_: CounterPage, cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
        let bus = cx.state().bus().clone();
        Ok(Counter { bus, count: COUNT.load(Ordering::Relaxed), state: PhantomData })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.subscribe::<Message>(self.bus.subscribe(TOPIC));
    }

    fn handle(&mut self, Event::Bump: Event, socket: &mut LiveSocket<Self>) {
        // Seen back through the subscription, as every other view sees it.
        let bus = self.bus.clone();
        socket.spawn(async move {
            let _refused = bump_and_publish(&bus).await;
            Bumped
        });
    }

    /// The render reads the count alone: every view showing one count shares its
    /// rendering and message.
    fn render_key(&self) -> Option<u64> {
        Some(self.count)
    }

    fn render(&self) -> Live<Event> {
        render(self.count)
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        super::page("Counter", view)
    }
}

impl<S: BenchState> HandleInfo<Message> for Counter<S> {
    fn handle_info(&mut self, message: Message, _: &mut LiveSocket<Self>) {
        if let Ok(count) = message.payload().parse::<u64>() {
            // Two bumps published by two workers may arrive out of order.
            self.count = self.count.max(count);
        }
    }
}

impl<S: BenchState> HandleInfo<Bumped> for Counter<S> {
    fn handle_info(&mut self, Bumped: Bumped, _: &mut LiveSocket<Self>) {}
}

async fn bump_and_publish(bus: &LocalBus) -> Result<u64, Rejection> {
    let count = COUNT.fetch_add(1, Ordering::Relaxed) + 1;
    super::publish(bus, TOPIC, &count.to_string()).await?;
    Ok(count)
}

/// Answers the new count once every local view has been handed it.
pub(crate) async fn bump<S: BenchState>(_: Bump, State(state): State<S>) -> Result<String, Rejection> {
    Ok(format!("{}\n", bump_and_publish(state.bus()).await?))
}
