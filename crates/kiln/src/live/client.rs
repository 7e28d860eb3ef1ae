//! The client script (`client.js`, ours, no build step): served by every app with a
//! live view at a content-hashed path, cacheable for ever, and linked from each live
//! page's first answer.

use std::sync::LazyLock;

use kiln_http::Response;
use sha2::{Digest, Sha256};

use crate::asset::IMMUTABLE;
use crate::extract::RequestContext;
use crate::handler::{Dispatch, Handler};
use crate::response::{IntoResponse, JavaScript};

/// The script.
pub(crate) const CLIENT: &str = include_str!("client.js");

/// Where the script is served: `/_kiln/live.<8 hex digits of SHA-256 of it>.js`, so a
/// new script is a new name and the old one may be cached for ever.
pub(crate) fn client_path() -> &'static str {
    static PATH: LazyLock<String> = LazyLock::new(|| {
        let hash = Sha256::digest(CLIENT.as_bytes());
        let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
        format!("/_kiln/live.{hex}.js")
    });
    &PATH
}

/// The handler serving the script.
pub(crate) struct ClientScript;

/// Marks the handler above, which takes no arguments.
pub(crate) struct ScriptRequest;

impl<S: 'static> Handler<ScriptRequest, S> for ClientScript {
    fn start<'a>(&'a self, _cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        ([("cache-control", IMMUTABLE)], JavaScript(CLIENT)).into_response(res);
        Dispatch::Done
    }
}
