//! What the site keeps per worker: its settings (the rate limits among them, one
//! count for every worker) and its handle on the bus.

use std::sync::Arc;

use kiln::realtime::{Bus, LocalBus};

use super::settings::Settings;

/// The site's part of a worker's state.
#[derive(Debug)]
pub(crate) struct SiteWorker {
    pub(crate) settings: Arc<Settings>,
    /// This worker's handle on the bus that carries new comments to open pages.
    pub(crate) bus: LocalBus,
}

impl SiteWorker {
    pub(crate) fn new(settings: &Arc<Settings>, bus: &Bus) -> Self {
        SiteWorker { bus: bus.attach(), settings: Arc::clone(settings) }
    }
}
