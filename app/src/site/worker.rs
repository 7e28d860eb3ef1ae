//! What the site keeps per worker: its settings and the rate limits of its visitors,
//! unlocked since each worker has its own.

use std::cell::RefCell;
use std::sync::Arc;

use kiln::realtime::{Bus, LocalBus};

use super::limit::RateLimit;
use super::settings::Settings;

/// The site's part of a worker's state.
#[derive(Debug)]
pub(crate) struct SiteWorker {
    pub(crate) settings: Arc<Settings>,
    /// Comments posted, by client address.
    pub(crate) comments: RefCell<RateLimit>,
    /// Login attempts, by client address.
    pub(crate) logins: RefCell<RateLimit>,
    /// This worker's handle on the bus that carries new comments to open pages.
    pub(crate) bus: LocalBus,
}

impl SiteWorker {
    pub(crate) fn new(settings: &Arc<Settings>, bus: &Bus) -> Self {
        SiteWorker {
            bus: bus.attach(),
            comments: RefCell::new(RateLimit::new(settings.comments_per_minute)),
            logins: RefCell::new(RateLimit::new(settings.logins_per_minute)),
            settings: Arc::clone(settings),
        }
    }
}
