//! The app's [`Key`] as a handler argument, so a handler can sign what it hands out
//! (a [`BearerToken`](crate::BearerToken), an invitation link).

use crate::extract::{FromRequest, RequestContext};
use crate::key::Key;
use crate::rejection::Rejection;
use crate::signed::app_key;

/// The app's secret key ([`App::secret_key`](crate::App::secret_key)); an app whose
/// handlers ask for it and has none is refused when it is built.
impl<S> FromRequest<S> for Key {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("Key");

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        app_key(cx.config(), "Key").cloned()
    }
}
