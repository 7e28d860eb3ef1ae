//! JSON: `Json<T>` reads a request body and writes a response body with serde_json,
//! straight from and into the connection's buffers.

use kiln_http::{Response, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::extract::{FromRequest, RequestContext, content_type_is};
use crate::rejection::{InvalidJson, MalformedJson, PayloadTooLarge, Rejection, UnsupportedMediaType};
use crate::response::{IntoResponse, default_content_type};

/// A JSON body: as an argument, the request's body parsed into `T`; as a return
/// value, `T` serialised into the response buffer with `application/json`.
///
/// As an extractor it refuses a body larger than the app's body limit (413), a
/// `Content-Type` other than `application/json` or `application/*+json` (415),
/// malformed JSON (400) and JSON of the wrong shape (422).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<S, T: DeserializeOwned> FromRequest<S> for Json<T> {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let req = cx.request();
        if !content_type_is(req, "application/json") {
            return Err(UnsupportedMediaType::new("expected `Content-Type: application/json`").into());
        }
        let body = req.body();
        if body.len() > cx.body_limit() {
            let msg = format!("JSON body of {} bytes exceeds the limit of {} bytes", body.len(), cx.body_limit());
            return Err(PayloadTooLarge::new(msg).into());
        }
        serde_json::from_slice(body).map(Json).map_err(|e| {
            if e.is_data() {
                InvalidJson::new(format!("invalid JSON: {e}")).into()
            } else {
                MalformedJson::new(format!("malformed JSON: {e}")).into()
            }
        })
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self, res: &mut Response) {
        let body = res.body_mut();
        if serde_json::to_writer(&mut *body, &self.0).is_ok() {
            default_content_type(res, "application/json");
        } else {
            // Only a `Serialize` impl that fails (a map with non-string keys) gets here.
            body.clear();
            res.set_status(StatusCode::INTERNAL_SERVER_ERROR);
        }
    }
}
