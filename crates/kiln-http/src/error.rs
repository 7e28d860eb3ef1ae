//! The one error type of the server runtime.

use std::fmt;
use std::io;

/// Why the server could not start or stopped abnormally. Opaque; ask with `is_*`.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Bind(io::Error),
    Runtime(io::Error),
    WorkerPanicked,
    /// The certificate or key could not be used; the message names the file.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    Tls(String),
}

impl Error {
    pub(crate) fn bind(e: io::Error) -> Self {
        Error { kind: Kind::Bind(e) }
    }

    pub(crate) fn runtime(e: io::Error) -> Self {
        Error { kind: Kind::Runtime(e) }
    }

    #[cfg(feature = "tls")]
    pub(crate) fn tls(message: String) -> Self {
        Error { kind: Kind::Tls(message) }
    }

    pub(crate) fn worker_panicked() -> Self {
        Error { kind: Kind::WorkerPanicked }
    }

    /// The listening socket could not be created or bound (address in use, say).
    pub fn is_bind(&self) -> bool {
        matches!(self.kind, Kind::Bind(_))
    }

    /// A worker's runtime could not be built or failed.
    pub fn is_runtime(&self) -> bool {
        matches!(self.kind, Kind::Runtime(_))
    }

    /// The TLS certificate or key could not be read or used (the message names the file).
    pub fn is_tls(&self) -> bool {
        matches!(self.kind, Kind::Tls(_))
    }

    /// A worker thread panicked outside any request (in the service factory, say).
    pub fn is_worker_panic(&self) -> bool {
        matches!(self.kind, Kind::WorkerPanicked)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Bind(e) => write!(f, "cannot listen: {e}"),
            Kind::Runtime(e) => write!(f, "worker runtime failed: {e}"),
            Kind::WorkerPanicked => f.write_str("a worker thread panicked"),
            Kind::Tls(message) => write!(f, "TLS: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Bind(e) | Kind::Runtime(e) => Some(e),
            Kind::WorkerPanicked | Kind::Tls(_) => None,
        }
    }
}
