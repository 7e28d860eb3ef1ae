//! URL-encoded data: `Query<T>` from the query string, `Form<T>` from the body.

use serde::de::DeserializeOwned;

use crate::extract::{FromRequest, RequestContext, content_type_is};
use crate::rejection::{InvalidForm, InvalidQuery, PayloadTooLarge, Rejection, UnsupportedMediaType};

/// The query string deserialised into `T` (with serde); refused with 400 when it
/// does not fit. A typed route's own query fields are usually handier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Query<T>(pub T);

impl<S, T: DeserializeOwned> FromRequest<S> for Query<T> {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let query = cx.request().query().unwrap_or("");
        serde_urlencoded::from_str(query)
            .map(Query)
            .map_err(|e| InvalidQuery::new(format!("invalid query: {e}")).into())
    }
}

/// An `application/x-www-form-urlencoded` body deserialised into `T`.
///
/// Refuses a body larger than the app's body limit (413), another `Content-Type`
/// (415) and fields that do not fit `T` (422).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Form<T>(pub T);

impl<S, T: DeserializeOwned> FromRequest<S> for Form<T> {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let req = cx.request();
        if !content_type_is(req, "application/x-www-form-urlencoded") {
            return Err(UnsupportedMediaType::new("expected `Content-Type: application/x-www-form-urlencoded`").into());
        }
        let body = req.body();
        if body.len() > cx.body_limit() {
            let msg = format!("form body of {} bytes exceeds the limit of {} bytes", body.len(), cx.body_limit());
            return Err(PayloadTooLarge::new(msg).into());
        }
        serde_urlencoded::from_bytes(body).map(Form).map_err(|e| InvalidForm::new(format!("invalid form: {e}")).into())
    }
}
