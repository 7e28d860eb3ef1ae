//! Events posted to a live page's path, for a page whose view runs over an event
//! stream (`sse.rs`): `POST` with the page's token in `Kiln-Live-Token`, the stream's
//! id in `Kiln-Live-Stream`, and the event as the body (the JSON a socket would carry).
//! The token is checked as the stream's was (this app's, not expired, this view, this
//! page, this visitor: else 403) and must be the one the stream was opened with; the
//! event goes to the stream's view, which decodes it and answers on the stream as over
//! a socket. The POST is answered `204` once the event is handed over; `404` when no
//! such stream is open here (the page opens its stream again), `429` when the view has
//! not taken the events it was sent, `413` (and the stream closes, 1009) for an event
//! over the view's `max_event_bytes`.
//!
//! Another site can make the visitor's browser post here with its cookies, but not
//! with the token (a custom header needs a CORS preflight, and the page that holds the
//! token cannot be read cross-site), nor name a stream (its id is sent only on it).

use std::marker::PhantomData;
use std::time::SystemTime;

use kiln_http::{Response, StatusCode};

use crate::csrf::Csrf;
use crate::extract::{FromRequest, RequestContext, route_from_request};
use crate::handler::{Dispatch, Handler};
use crate::live::page::claims;
use crate::live::sse;
use crate::live::streams::{self, Undelivered};
use crate::live::token;
use crate::live::transport::FromPage;
use crate::live::view::LiveView;
use crate::rejection::Rejection;
use crate::signed::app_key;

/// The header naming the stream an event is for.
pub(crate) const STREAM_HEADER: &str = "kiln-live-stream";

/// The handler of events posted to `V`'s path, which [`App::live`](crate::App::live)
/// registers beside the page.
pub(crate) struct LiveEvents<V>(PhantomData<fn() -> V>);

/// The handler of `V`'s posted events.
pub(crate) fn events<V: LiveView>() -> LiveEvents<V> {
    LiveEvents(PhantomData)
}

/// What a [`LiveEvents`] takes in place of a handler's arguments: the request.
pub(crate) struct PostArgs<V>(PhantomData<fn() -> V>);

impl<V: LiveView> Handler<PostArgs<V>, V::AppState> for LiveEvents<V> {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("LiveView");

    fn start<'a>(&'a self, cx: &RequestContext<'a, V::AppState>, res: &'a mut Response) -> Dispatch<'a> {
        match post::<V>(cx) {
            Ok(status) => res.set_status(status),
            Err(rejection) => cx.config().reject(&rejection, res),
        }
        Dispatch::Done
    }
}

fn post<V: LiveView>(cx: &RequestContext<'_, V::AppState>) -> Result<StatusCode, Rejection> {
    let route = route_from_request::<_, V::Route>(cx)?;
    let key = app_key(cx.config(), "LiveView")?;
    let visitor = Csrf::from_request(cx)?;
    let req = cx.request();
    let token = sse::token(&req).ok_or_else(|| Rejection::custom(StatusCode::FORBIDDEN, sse::NO_TOKEN))?;
    let page = route.to_string();
    token::check(key, token, &claims::<V>(&page, &visitor), SystemTime::now())
        .map_err(|refusal| Rejection::custom(StatusCode::FORBIDDEN, refusal.reason()))?;
    let stream = req
        .header_str(STREAM_HEADER)
        .ok_or_else(|| Rejection::custom(StatusCode::BAD_REQUEST, "an event names its stream in `Kiln-Live-Stream`"))?;
    let body = req.body();
    let event = if body.len() > V::LIMITS.max_event_bytes {
        FromPage::TooLarge
    } else {
        std::str::from_utf8(body).map_or(FromPage::Other, |text| FromPage::Text(text.to_owned()))
    };
    let too_large = matches!(event, FromPage::TooLarge);
    match streams::deliver(stream, token, event) {
        Ok(()) if too_large => Err(Rejection::custom(StatusCode::PAYLOAD_TOO_LARGE, "event too large")),
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(Undelivered::NotOpen) => Err(Rejection::custom(StatusCode::NOT_FOUND, "no such live stream is open here")),
        Err(Undelivered::Full) => Err(Rejection::custom(StatusCode::TOO_MANY_REQUESTS, "too many events: slow down")),
    }
}
