//! Extractors: what a handler's arguments are made from.
//!
//! On most routes the engine reads the whole body (up to the server's
//! `max_body_bytes`) before the app runs, so most extraction is synchronous
//! ([`FromRequest`]): every argument is built, or the first failure is rendered,
//! before the handler's future exists. A route given
//! [`App::stream_body`](crate::App::stream_body) is different: its handler runs
//! once the head has arrived and reads the body as it comes, with
//! [`Multipart`](crate::multipart::Multipart) or
//! [`Request::body_stream`](kiln_http::Request::body_stream); there `Bytes`,
//! `String`, `Form` and `Json`, which want the body whole, find it empty.
//!
//! An extractor that must wait (the database, the bus) implements
//! [`FromRequestAsync`] instead; a handler taking one extracts all its arguments
//! inside its future, in order, and a handler taking none runs exactly as if
//! `FromRequestAsync` did not exist.

use std::future::Future;
use std::ops::Deref;
use std::rc::Rc;

use kiln_http::{Bytes, Method, Request, Version};

use crate::config::Config;
use crate::rejection::{Internal, InvalidBody, MissingHeader, Rejection};
use crate::route::{PathParams, Route};

/// Everything an extractor may look at: the request, the matched route and the
/// worker's state.
pub struct RequestContext<'a, S> {
    pub(crate) req: Request<'a>,
    pub(crate) params: PathParams<'a, 'a>,
    pub(crate) pattern: Option<&'a str>,
    pub(crate) state: &'a Rc<S>,
    pub(crate) config: &'a Config,
}

impl<'a, S> RequestContext<'a, S> {
    /// The request.
    pub fn request(&self) -> Request<'a> {
        self.req
    }

    /// The parameters the matched pattern captured.
    pub fn params(&self) -> &PathParams<'a, 'a> {
        &self.params
    }

    /// The pattern that matched, or `None` in the fallback.
    pub fn pattern(&self) -> Option<&'a str> {
        self.pattern
    }

    /// This worker's state.
    pub fn state(&self) -> &'a Rc<S> {
        self.state
    }

    /// The largest body `Json` and `Form` accept.
    pub fn body_limit(&self) -> usize {
        self.config.body_limit
    }

    /// The app's settings.
    pub(crate) fn config(&self) -> &'a Config {
        self.config
    }
}

/// A copy for an async extractor, which owns its context while it waits.
impl<S> Clone for RequestContext<'_, S> {
    fn clone(&self) -> Self {
        RequestContext {
            req: self.req,
            params: self.params.clone(),
            pattern: self.pattern,
            state: self.state,
            config: self.config,
        }
    }
}

/// Builds a handler argument from the request.
///
/// `Option<T>` and `Result<T, Rejection>` of any extractor are extractors too, so a
/// handler decides itself what a missing or bad part means:
///
/// ```
/// use kiln::{App, Form, Html, Route, rejection::Rejection};
/// use serde::Deserialize;
///
/// #[derive(Route)]
/// #[route(POST, "/comments")]
/// struct PostComment;
///
/// #[derive(Deserialize)]
/// struct Comment { body: String }
///
/// async fn post(_: PostComment, form: Result<Form<Comment>, Rejection>) -> (kiln::StatusCode, Html<String>) {
///     match form {
///         Ok(Form(c)) => (kiln::StatusCode::OK, Html(format!("thanks for {} bytes", c.body.len()))),
///         Err(e) => (kiln::StatusCode::UNPROCESSABLE_ENTITY, Html(format!("<p>{e}</p><form>...</form>"))),
///     }
/// }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(post));
/// let res = client.request("POST", &PostComment).form(&[("title", "x")]).send();
/// assert_eq!(res.status(), 422);
/// assert!(res.text().contains("missing field `body`"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler argument: it implements neither `FromRequest<{S}>` nor `FromRequestAsync<{S}>`",
    label = "this argument is not an extractor",
    note = "a handler argument must implement `FromRequest<{S}>` (built from the request at once) or `FromRequestAsync<{S}>` (built after awaiting, say, the database): a typed route, `Query<T>`, `Form<T>`, `Json<T>`, `Multipart`, `Headers`, `Cookies`, `SignedCookies`, `Session`, `Csrf`, `CsrfGuard`, `PublicUrl`, `ClientAddr`, `State<S>`, `RequestHead`, `Method`, `BearerToken`, `Key`, `LastEventId`, `WebSocketUpgrade`, `Bytes` or `String` (the body), or `Option<_>` / `Result<_, Rejection>` of any of them or of a `FromRequestAsync` type",
    note = "`State<T>` must name the app's own state type: `State<{S}>`",
    note = "a type of your own can implement `FromRequest<S>` for every `S` (or for the app's state type), or `FromRequestAsync<{S}>`"
)]
pub trait FromRequest<S>: Sized {
    /// The extractor's name when it signs or verifies with the app's secret key
    /// (`Session`, `Csrf`, ...): an app without one is refused when it is built,
    /// rather than answering `500` to every request that reaches the handler.
    #[doc(hidden)]
    const NEEDS_SECRET_KEY: Option<&'static str> = None;

    /// Whether extracting waits: `true` only for `Option<T>` or `Result<T, Rejection>`
    /// of a [`FromRequestAsync`] that waits, which a handler then builds with
    /// [`from_request_awaiting`](Self::from_request_awaiting).
    #[doc(hidden)]
    const AWAITS: bool = false;

    /// Whether this is a WebSocket handshake: a route taking one also answers an
    /// HTTP/2 extended CONNECT (RFC 8441), which the app's connections then offer.
    #[doc(hidden)]
    const WEBSOCKET: bool = false;

    /// Builds the value, or says why the request is refused.
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection>;

    /// Builds the value inside the handler's future: what a handler calls when
    /// [`AWAITS`](Self::AWAITS) is `true`.
    #[doc(hidden)]
    fn from_request_awaiting(cx: RequestContext<'_, S>) -> impl Future<Output = Result<Self, Rejection>> {
        std::future::ready(Self::from_request(&cx))
    }
}

/// Builds a handler argument from the request, waiting for what it needs: a bearer
/// token looked up in the database, a message from the bus.
///
/// Every [`FromRequest`] is a `FromRequestAsync` too, so this is the trait a handler's
/// arguments implement. A handler whose arguments are all synchronous extracts them
/// before its future is made, as if this trait did not exist; one that takes an async
/// extractor extracts every argument inside its future (which is boxed anyway), in
/// order, and the first refusal is rendered as the app renders rejections.
///
/// Implement it for the app's state type (`FromRequestAsync<AppState>`): an async
/// extractor usually reads the state's database, and an impl for every `S` would
/// overlap the one every `FromRequest` gets. `Option<T>` and `Result<T, Rejection>`
/// of an async extractor are extractors too, as they are of a synchronous one: a
/// page that greets a signed-in visitor takes `Option<Caller>`, which is `None` when
/// `Caller` refuses.
///
/// ```
/// use kiln::{App, FromRequestAsync, Rejection, RequestContext, Route};
/// use kiln::rejection::Unauthorized;
///
/// struct AppState { tokens: Vec<String> }
///
/// /// The caller, as the bearer token names them.
/// struct Caller(String);
///
/// impl FromRequestAsync<AppState> for Caller {
///     async fn from_request_async(cx: RequestContext<'_, AppState>) -> Result<Self, Rejection> {
///         let token = cx.request().header_str("authorization").and_then(|v| v.strip_prefix("Bearer "));
///         // A real app awaits its database here.
///         match token {
///             Some(t) if cx.state().tokens.iter().any(|k| k == t) => Ok(Caller(t.to_owned())),
///             _ => Err(Unauthorized::invalid_token("a valid token is required").into()),
///         }
///     }
/// }
///
/// #[derive(Route)]
/// #[route("/me")]
/// struct Me;
///
/// async fn me(_: Me, caller: Caller) -> String {
///     caller.0
/// }
///
/// let app = App::new(|_| AppState { tokens: vec!["t1".into()] }).route(me);
/// let mut client = kiln::test::TestClient::new(app);
/// assert_eq!(client.request("GET", &Me).header("authorization", "Bearer t1").send().text(), "t1");
/// assert_eq!(client.get(&Me).status(), 401);
///
/// #[derive(Route)]
/// #[route("/hello")]
/// struct Hello;
///
/// async fn hello(_: Hello, caller: Option<Caller>) -> String {
///     caller.map_or("hello, stranger".to_owned(), |c| format!("hello, {}", c.0))
/// }
///
/// let app = App::new(|_| AppState { tokens: vec!["t1".into()] }).route(hello);
/// let mut client = kiln::test::TestClient::new(app);
/// assert_eq!(client.get(&Hello).text(), "hello, stranger");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler argument: it implements neither `FromRequest<{S}>` nor `FromRequestAsync<{S}>`",
    label = "this argument is not an extractor",
    note = "a handler argument must implement `FromRequest<{S}>` (built from the request at once) or `FromRequestAsync<{S}>` (built after awaiting, say, the database): a typed route, `Query<T>`, `Form<T>`, `Json<T>`, `Multipart`, `Headers`, `Cookies`, `SignedCookies`, `Session`, `Csrf`, `CsrfGuard`, `PublicUrl`, `ClientAddr`, `State<S>`, `RequestHead`, `Method`, `BearerToken`, `Key`, `LastEventId`, `WebSocketUpgrade`, `Bytes` or `String` (the body), or `Option<_>` / `Result<_, Rejection>` of any of them or of a `FromRequestAsync` type",
    note = "`State<T>` must name the app's own state type: `State<{S}>`",
    note = "a type of your own can implement `FromRequest<S>` for every `S` (or for the app's state type), or `FromRequestAsync<{S}>`"
)]
pub trait FromRequestAsync<S>: Sized {
    /// Whether extracting waits; `false` only for a [`FromRequest`].
    #[doc(hidden)]
    const AWAITS: bool = true;

    /// The extractor's name when it signs or verifies with the app's secret key.
    #[doc(hidden)]
    const NEEDS_SECRET_KEY: Option<&'static str> = None;

    /// Whether this is a WebSocket handshake (see [`FromRequest`]).
    #[doc(hidden)]
    const WEBSOCKET: bool = false;

    /// Builds the value, or says why the request is refused.
    fn from_request_async(cx: RequestContext<'_, S>) -> impl Future<Output = Result<Self, Rejection>>;

    /// The value built at once: what a handler whose arguments are all
    /// [`FromRequest`] calls (`AWAITS` is `false`). An async extractor has no such
    /// form, and a handler never asks it for one.
    #[doc(hidden)]
    fn from_request_now(_cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Err(Internal::new(format!("`{}` is an async extractor", std::any::type_name::<Self>())).into())
    }
}

/// Every synchronous extractor, as a handler argument.
impl<S, T: FromRequest<S>> FromRequestAsync<S> for T {
    const AWAITS: bool = T::AWAITS;
    const NEEDS_SECRET_KEY: Option<&'static str> = T::NEEDS_SECRET_KEY;
    const WEBSOCKET: bool = T::WEBSOCKET;

    fn from_request_async(cx: RequestContext<'_, S>) -> impl Future<Output = Result<Self, Rejection>> {
        T::from_request_awaiting(cx)
    }

    fn from_request_now(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        T::from_request(cx)
    }
}

/// `None` when the extractor refuses the request, instead of answering with its
/// rejection: `Option<Query<Search>>` is `None` for an absent or malformed query, and
/// `Option<Caller>` for a visitor an async `Caller` does not know.
///
/// These impls are of `FromRequest` for every [`FromRequestAsync`] (which every
/// `FromRequest` is), rather than of `FromRequestAsync`, which would overlap the
/// blanket impl above; over an extractor that waits they wait too (`AWAITS`), and a
/// handler builds them inside its future.
impl<S, T: FromRequestAsync<S>> FromRequest<S> for Option<T> {
    const NEEDS_SECRET_KEY: Option<&'static str> = T::NEEDS_SECRET_KEY;
    const AWAITS: bool = T::AWAITS;

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        if T::AWAITS {
            return Err(awaited::<T>());
        }
        Ok(T::from_request_now(cx).ok())
    }

    async fn from_request_awaiting(cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(T::from_request_async(cx).await.ok())
    }
}

/// The extractor's rejection handed to the handler instead of answered: a form
/// missing a field can be shown again with the message.
impl<S, T: FromRequestAsync<S>> FromRequest<S> for Result<T, Rejection> {
    const NEEDS_SECRET_KEY: Option<&'static str> = T::NEEDS_SECRET_KEY;
    const AWAITS: bool = T::AWAITS;

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        if T::AWAITS {
            return Err(awaited::<T>());
        }
        Ok(T::from_request_now(cx))
    }

    async fn from_request_awaiting(cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(T::from_request_async(cx).await)
    }
}

/// Why `Option<T>` or `Result<T, _>` of an async `T` was asked for at once: only an
/// extractor of the app's own, calling `from_request` itself, can do that.
fn awaited<T>() -> Rejection {
    let name = std::any::type_name::<T>();
    Internal::new(format!("`{name}` is an async extractor: await `FromRequestAsync::from_request_async`")).into()
}

/// A typed route's `FromRequest`, which `#[derive(Route)]` implements with this.
#[doc(hidden)]
pub fn route_from_request<S, R: Route>(cx: &RequestContext<'_, S>) -> Result<R, Rejection> {
    if cx.pattern != Some(R::PATTERN) {
        let msg = format!(
            "handler asks for route `{}` ({}) but the request matched {:?}",
            std::any::type_name::<R>(),
            R::PATTERN,
            cx.pattern
        );
        return Err(Internal::new(msg).into());
    }
    R::from_parts(&cx.params, cx.req.query())
}

/// This worker's state, as built by the factory given to [`App::new`](crate::App::new).
///
/// Each worker owns its own, so it may hold `Rc`, `RefCell` caches or a database
/// connection without locks. Taking it costs one non-atomic reference count.
#[derive(Debug)]
pub struct State<S>(pub Rc<S>);

impl<S> Deref for State<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S> FromRequest<S> for State<S> {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(State(Rc::clone(cx.state)))
    }
}

impl<S> FromRequest<S> for Method {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Method::from_bytes(cx.req.method().as_bytes()).map_err(|_| InvalidBody::new("invalid method").into())
    }
}

/// The raw body, copied out of the connection's buffer.
impl<S> FromRequest<S> for Bytes {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(Bytes::copy_from_slice(cx.req.body()))
    }
}

/// The body as text; a body that is not UTF-8 is refused with 400.
impl<S> FromRequest<S> for String {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        match std::str::from_utf8(cx.req.body()) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(InvalidBody::new(format!("body is not UTF-8: {e}")).into()),
        }
    }
}

/// The request's headers, copied into a `http::HeaderMap`.
#[derive(Debug, Clone, Default)]
pub struct Headers(pub ::http::HeaderMap);

impl Headers {
    /// The first value of `name` as text, if present and visible ASCII.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.to_str().ok())
    }

    /// The first value of `name`, or a `MissingHeader` rejection naming it.
    pub fn require(&self, name: &str) -> Result<&str, MissingHeader> {
        self.get(name).ok_or_else(|| MissingHeader::new(format!("header `{name}` is required")))
    }
}

impl<S> FromRequest<S> for Headers {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(Headers(header_map(cx.req)))
    }
}

fn header_map(req: Request<'_>) -> ::http::HeaderMap {
    let mut map = ::http::HeaderMap::new();
    for (name, value) in req.headers() {
        // The engine admits only valid header names and values.
        if let (Ok(n), Ok(v)) =
            (::http::HeaderName::from_bytes(name.as_bytes()), ::http::HeaderValue::from_bytes(value))
        {
            map.append(n, v);
        }
    }
    map
}

/// The request head: method, target, version, headers and peer, owned.
#[derive(Debug, Clone)]
pub struct RequestHead {
    /// The method.
    pub method: Method,
    /// The target as sent: path and query, percent-encoded.
    pub target: String,
    /// The protocol version.
    pub version: Version,
    /// The headers.
    pub headers: ::http::HeaderMap,
    /// The peer's address.
    pub peer: std::net::SocketAddr,
}

impl RequestHead {
    /// The path part of the target.
    pub fn path(&self) -> &str {
        self.target.split_once('?').map_or(&self.target, |(p, _)| p)
    }

    /// The query part of the target, if any.
    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, q)| q)
    }
}

impl<S> FromRequest<S> for RequestHead {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let req = cx.req;
        Ok(RequestHead {
            method: Method::from_request(cx)?,
            target: req.target().to_owned(),
            version: req.version(),
            headers: header_map(req),
            peer: req.peer_addr(),
        })
    }
}

/// Whether the request's `Content-Type` is `expected` (type and subtype, ignoring
/// parameters and case), or `application/*+json` when `expected` is JSON.
pub(crate) fn content_type_is(req: Request<'_>, expected: &str) -> bool {
    let Some(value) = req.header_str("content-type") else { return false };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case(expected)
        || (expected == "application/json"
            && essence.len() > 17
            && essence[..12].eq_ignore_ascii_case("application/")
            && essence[essence.len() - 5..].eq_ignore_ascii_case("+json"))
}
