//! The live-view benchmark's pages (issue 31, "Speed and memory";
//! `bench/kilnbench/live.py` drives them): three live views on `/bench/live/counter`,
//! `/bench/live/table` and `/bench/live/chat`, each changed for every open copy by a
//! POST trigger that publishes on the app's bus, and the floor beside them
//! (`/bench/live/floor/{page}`): kiln's own WebSocket delivery of the bytes those views
//! send, rendered once per trigger. Only public API.

mod chat;
mod counter;
mod floor;
mod table;
#[cfg(test)]
mod tests;

use kiln::App;
use kiln::markup::{Document, Flow, Fragment};
use kiln::realtime::LocalBus;
use kiln::{Rejection, StatusCode, html};

use crate::state::Worker;

/// What the benchmark's pages need of the app's per-worker state: its bus, which
/// carries each trigger to every open view (and to every floor socket).
pub(crate) trait BenchState: 'static {
    /// This worker's handle on the app's bus.
    fn bus(&self) -> &LocalBus;
}

impl BenchState for Worker {
    fn bus(&self) -> &LocalBus {
        &self.site.bus
    }
}

/// Adds the three views, their triggers and the floor.
pub(crate) fn mount<S: BenchState>(app: App<S>) -> App<S> {
    app.live::<counter::Counter<S>>()
        .route(counter::bump::<S>)
        .live::<table::TableView<S>>()
        .route(table::change::<S>)
        .live::<chat::ChatView<S>>()
        .route(chat::say::<S>)
        .route(floor::socket::<S>)
        .route(floor::trigger::<S>)
}

/// The bare page around a benchmark view: no stylesheet, no icon to fetch.
fn page(title: &str, view: Fragment<Flow>) -> Fragment<Document> {
    html! {
        html lang="en" {
            head { meta charset="utf-8"; title { (title) } }
            body { (view) }
        }
    }
}

/// Publishes one change; 503 when the bus refuses it.
async fn publish(bus: &LocalBus, topic: &str, payload: &str) -> Result<(), Rejection> {
    bus.publish(topic, payload)
        .await
        .map(drop)
        .map_err(|e| Rejection::custom(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))
}
