//! App layers: what wraps every response of an app (or of the paths a layer names)
//! after its handler: compression, CORS. Each is an [`App`](crate::App) setting
//! applied in one place, [`Layers`], with nothing on the request path when unset.

mod compression;
mod headers;

use kiln_http::{Request, Response};

pub use compression::{Compression, DEFAULT_COMPRESSION_MIN_SIZE, Encoding, Levels};

/// The app's layers, in the order they apply.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layers {
    pub(crate) compression: Option<Compression>,
}

impl Layers {
    /// After the handler (and `SecureHeaders`): compression last, over the final
    /// headers.
    pub(crate) fn after(&self, req: Request<'_>, path: &str, res: &mut Response) {
        if let Some(compression) = &self.compression {
            compression.apply(req, path, res);
        }
    }
}
