//! A live view's route: its first answer is the whole page over plain HTTP, rendered
//! from the state its `mount` built, so that it reads (and is crawled) without
//! JavaScript; the same path, asked for a WebSocket, is the page's socket, and asked
//! for `text/event-stream` (with the token in `Kiln-Live-Token`), its event stream
//! (`sse.rs`).
//!
//! The first answer mounts the view ([`LiveView::mount`]; a rejection answers
//! instead), renders it into a `<div data-kiln-live>` carrying the page's token, links
//! the client script after it, and puts both into the view's [`page`](LiveView::page).
//! The socket's handshake must offer the subprotocol `kiln-live` and the token (the
//! browser's `new WebSocket(url, ["kiln-live", token])`); the token is checked (this
//! app's, not expired, for this view, this page and this visitor: else 403), the view
//! is mounted again from the handshake's request (its state is rebuilt on the server,
//! never taken from the page) and the socket runs it.
//!
//! ```
//! use kiln::live::{Live, LiveSocket, LiveView};
//! use kiln::{App, Key, Rejection, RequestContext, Route, live_html};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Route)]
//! #[route("/hello/{name}")]
//! struct Hello {
//!     name: String,
//! }
//!
//! #[derive(Serialize, Deserialize)]
//! enum Event {
//!     Wave,
//! }
//!
//! struct Greeting {
//!     name: String,
//!     waves: u32,
//! }
//!
//! impl LiveView for Greeting {
//!     type AppState = ();
//!     type Route = Hello;
//!     type Event = Event;
//!
//!     async fn mount(route: Hello, _cx: RequestContext<'_, ()>) -> Result<Self, Rejection> {
//!         Ok(Greeting { name: route.name, waves: 0 })
//!     }
//!
//!     fn handle(&mut self, Event::Wave: Event, _: &mut LiveSocket<Self>) {
//!         self.waves += 1;
//!     }
//!
//!     fn render(&self) -> Live<Event> {
//!         live_html! { p { "Hello, " (self.name) " (" (self.waves) " waves)" } }
//!     }
//! }
//!
//! let app = App::new(|_| ()).secret_key(Key::generate()).live::<Greeting>();
//! let mut client = kiln::test::TestClient::new(app);
//! let page = client.get(&Hello { name: "<ann>".into() }).text();
//! assert!(page.contains("<p>Hello, &lt;ann&gt; (0 waves)</p></div>"), "{page}");
//! assert!(page.contains("data-kiln-token=") && page.contains("<script src=\"/_kiln/live."));
//! ```

use std::marker::PhantomData;
use std::time::SystemTime;

use kiln_html::Live;
use kiln_http::{Request, Response, StatusCode};

use crate::csrf::Csrf;
use crate::extract::{FromRequest, RequestContext, route_from_request};
use crate::handler::{Dispatch, Handler, RouteHandler};
use crate::key::HEX;
use crate::live::client::client_path;
use crate::live::socket;
use crate::live::sse;
use crate::live::token::{self, Claims, Refusal};
use crate::live::view::LiveView;
use crate::markup::{Flow, Fragment, escape};
use crate::rejection::Rejection;
use crate::response::IntoResponse;
use crate::signed::app_key;
use crate::ws::WebSocketUpgrade;

/// The subprotocol a live view's socket speaks; the page's token is offered beside it.
pub(crate) const PROTOCOL: &str = "kiln-live";

/// The handler answering a live view's route with its whole page, or with its socket,
/// which [`App::live`](crate::App::live) registers.
pub(crate) struct LivePage<V>(PhantomData<fn() -> V>);

/// The handler of `V`'s route.
pub(crate) fn page<V: LiveView>() -> LivePage<V> {
    LivePage(PhantomData)
}

/// What a [`LivePage`] takes in place of a handler's arguments: the request, which
/// it gives to the view's `mount`.
pub(crate) struct MountArgs<V>(PhantomData<fn() -> V>);

impl<V: LiveView> Handler<MountArgs<V>, V::AppState> for LivePage<V> {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("LiveView");
    // The route is also the page's socket: over HTTP/2 an extended CONNECT reaches it.
    const WEBSOCKET: bool = true;

    fn start<'a>(&'a self, cx: &RequestContext<'a, V::AppState>, res: &'a mut Response) -> Dispatch<'a> {
        let config = cx.config();
        let prepared = route_from_request::<_, V::Route>(cx).and_then(|route| {
            let key = app_key(config, "LiveView")?;
            let page = route.to_string();
            let req = cx.request();
            if sse::is_stream(&req) {
                // The visitor, by the signed CSRF cookie (set by the first answer if new).
                let visitor = Csrf::from_request(cx)?;
                let token = sse::token(&req).ok_or_else(|| Rejection::custom(StatusCode::FORBIDDEN, sse::NO_TOKEN))?;
                token::check(key, token, &claims::<V>(&page, &visitor), SystemTime::now())
                    .map_err(|refusal| Rejection::custom(StatusCode::FORBIDDEN, refusal.reason()))?;
                return Ok((route, page, key, Answer::Stream(token.to_owned())));
            }
            if !is_upgrade(&req) {
                return Ok((route, page, key, Answer::Page));
            }
            // The visitor, by the signed CSRF cookie (set by the first answer if new).
            let visitor = Csrf::from_request(cx)?;
            let ws = WebSocketUpgrade::from_request(cx)?;
            let offered = ws.offered_protocols().iter().find(|p| *p != PROTOCOL);
            offered
                .ok_or(Refusal::Missing)
                .and_then(|token| token::check(key, token, &claims::<V>(&page, &visitor), SystemTime::now()))
                .map_err(|refusal| Rejection::custom(StatusCode::FORBIDDEN, refusal.reason()))?;
            Ok((route, page, key, Answer::Socket(ws)))
        });
        let (route, page, key, answer) = match prepared {
            Ok(prepared) => prepared,
            Err(rejection) => {
                config.reject(&rejection, res);
                return Dispatch::Done;
            }
        };
        let (cx, mount_cx) = (cx.clone(), cx.clone());
        Dispatch::Running(Box::pin(async move {
            let view = match V::mount(route, mount_cx).await {
                Ok(view) => view,
                Err(rejection) => return config.reject(&rejection, res),
            };
            match answer {
                Answer::Page => {
                    // The token the view rendered into a form, if it did (the cookie set
                    // must be that one's); else the request's, made once the view needs
                    // none of its own.
                    let visitor = match view.visitor() {
                        Some(visitor) => visitor.clone(),
                        None => match Csrf::from_request(&cx) {
                            Ok(visitor) => visitor,
                            Err(rejection) => return config.reject(&rejection, res),
                        },
                    };
                    let token =
                        token::issue(key, &claims::<V>(&page, &visitor), V::LIMITS.token_ttl, SystemTime::now());
                    config.rendering(|| (visitor, first_answer(&view, &token)).into_response(res))
                }
                Answer::Socket(ws) => ws
                    .protocols([PROTOCOL])
                    .max_message(V::LIMITS.max_event_bytes)
                    .on_upgrade(move |socket| socket::run(view, socket))
                    .into_response(res),
                Answer::Stream(token) => sse::open(view, &token).into_response(res),
            }
        }))
    }
}

impl<V: LiveView> RouteHandler<MountArgs<V>, V::AppState> for LivePage<V> {
    type Route = V::Route;
}

/// What the route answers once the view is mounted.
enum Answer {
    /// The page, for the visitor (whose CSRF cookie it sets when new).
    Page,
    /// The page's socket, its token checked.
    Socket(WebSocketUpgrade),
    /// The page's event stream (`sse.rs`), for its checked token.
    Stream(String),
}

/// What a page's token vouches for: this view, on this page, for this visitor.
pub(crate) fn claims<'a, V: LiveView>(page: &'a str, visitor: &'a Csrf) -> Claims<'a> {
    Claims { view: std::any::type_name::<V>(), page, visitor: visitor.token() }
}

/// Whether the request asks for a WebSocket: `Upgrade: websocket` over HTTP/1.1 (RFC
/// 6455 §4.1), an extended CONNECT over HTTP/2 (RFC 8441 §4); the handshake's other
/// parts are checked by [`WebSocketUpgrade`].
fn is_upgrade(req: &Request<'_>) -> bool {
    req.method() == "CONNECT"
        || req
            .headers()
            .filter(|(name, _)| name.eq_ignore_ascii_case("upgrade"))
            .any(|(_, value)| value.trim_ascii().eq_ignore_ascii_case(b"websocket"))
}

/// The view's page with the view rendered in its container, and the client script.
fn first_answer<V: LiveView>(view: &V, token: &str) -> Fragment<kiln_html::Document> {
    view.page(container(view, token, None))
}

/// The view rendered in its container, carrying its token (and the path of its
/// socket, when not the page's own), then the client script.
pub(crate) fn container<V: LiveView>(view: &V, token: &str, path: Option<&str>) -> Fragment<Flow> {
    // `<div data-kiln-live="…" data-kiln-token="…" data-kiln-path="…">`, the view's
    // markup written straight after it as `html!` writes it (the page needs no slots,
    // and the view's HTML is not copied), then the fingerprint put in its place.
    let mut open = String::with_capacity(128 + token.len() + path.map_or(0, str::len));
    open.push_str(r#"<div data-kiln-live=""#);
    let at = open.len();
    open.push_str("0000000000000000");
    open.push_str(r#"" data-kiln-token=""#);
    escape(token, &mut open);
    if let Some(path) = path {
        open.push_str(r#"" data-kiln-path=""#);
        escape(path, &mut open);
    }
    open.push_str(r#"">"#);
    let (mut html, fingerprint) = Live::direct_after(&open, || view.render());
    let mut hex = [0u8; 16];
    for (i, digit) in hex.iter_mut().enumerate() {
        *digit = HEX[((fingerprint >> (60 - 4 * i)) & 15) as usize];
    }
    html.replace_range(at..at + hex.len(), std::str::from_utf8(&hex).expect("hex digits"));
    html.push_str(r#"</div><script src=""#);
    // `/_kiln/live.<hex>.js`: nothing to escape.
    html.push_str(client_path());
    html.push_str(r#"" defer></script>"#);
    // Flow content: the `<div>` holds what `live_html!` checked as flow content.
    Fragment::__checked(html)
}
