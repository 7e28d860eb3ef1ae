//! What kiln's test suites share, written once: a worker's runtime
//! ([`on_worker`]), temporary directories ([`TempDir`]), the PostgreSQL under test
//! ([`pg_url`]) and clusters of a test's own ([`Cluster`]), a raw HTTP/1.1 client
//! ([`get`], [`request`]), a client for responses that stay open ([`Streaming`]), a
//! spawned server binary ([`Server`]), headless Chromium over WebDriver ([`Browser`],
//! [`shots_dir`]) with a [`Relay`] in front of the server, and [`poll_until`].

mod browser;
mod http;
mod postgres;
mod server;
mod stream;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use browser::relay::Relay;
pub use browser::{Browser, shots_dir};
pub use http::{Reply, get, request};
pub use postgres::{Cluster, pg_url};
pub use server::Server;
pub use stream::Streaming;

/// Runs `f` on a current-thread runtime inside a `LocalSet`, as a kiln worker does.
pub fn on_worker<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    tokio::task::LocalSet::new().block_on(&rt, f)
}

/// Calls `f` every 50 ms until it returns `Some`, for at most `deadline`.
pub fn poll_until<T>(deadline: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fresh directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory whose name includes `name` and the process id.
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("kiln-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `sqlite://` URL of a database file in the directory.
    pub fn sqlite_url(&self) -> String {
        format!("sqlite://{}", self.0.join("kiln.sqlite").display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
