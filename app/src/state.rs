//! What each worker owns: its database handle, the benchmark's and the site's
//! per-worker state.

use std::sync::Arc;
use std::time::Duration;

use kiln::db::Db;

use crate::database::Databases;
use crate::site::settings::Settings;
use crate::site::worker::SiteWorker;
use crate::techempower::Bench;

/// One worker's state, built on its thread, so nothing in it needs a lock.
pub(crate) struct Worker {
    pub(crate) db: Db,
    pub(crate) bench: Bench,
    /// How long a blocking call may wait before it is answered with 503.
    pub(crate) query_timeout: Duration,
    pub(crate) site: SiteWorker,
}

impl Worker {
    pub(crate) fn new(databases: &Databases, site: &Arc<Settings>) -> Self {
        Worker {
            db: databases.main.worker(),
            bench: Bench::new(&databases.main, databases.long.as_ref(), databases.long_query),
            query_timeout: databases.query_timeout,
            site: SiteWorker::new(site, &databases.bus),
        }
    }
}
