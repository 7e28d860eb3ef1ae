//! kiln: a web framework with statically checked links, on a thread-per-core
//! HTTP/1.1 engine.
//!
//! - **Typed routes**: a route is a type (`#[derive(Route)]`), its value is its link;
//!   a link to a missing route or with a wrongly typed parameter does not compile.
//!   Route conflicts are reported at start-up, naming both routes.
//! - **Handlers** are `async fn`s taking extractors ([`Query`], [`Form`], [`Json`],
//!   [`Headers`], [`Cookies`], [`State`], the body, the head) and returning anything
//!   [`IntoResponse`]; each refusal is its own [rejection] type, and `Option<T>` or
//!   `Result<T, Rejection>` of an extractor hands the refusal to the handler. A
//!   handler that does not fit is a compile error naming the argument or output at fault.
//! - **Per-worker state**: built once per worker, so it may be `!Send` and needs no
//!   locks; [`App::try_new`] when building it may fail, which stops start-up.
//! - **Responses** written straight into the connection's reusable buffer: JSON with
//!   serde_json, checked HTML with [`html!`] ([`markup`]), `maud::Markup` behind
//!   the `maud` feature (with maud a dependency of the app), any content type with [`Typed`] ([`Xml`], [`Rss`], [`Css`], [`JavaScript`]);
//!   header parts such as `([("Content-Type", "application/rss+xml")], body)` replace
//!   the body's own.
//! - **Absolute links** from the configured [`App::public_url`] ([`PublicUrl`]), for
//!   feeds and sitemaps.
//! - **Signed cookies, sessions and CSRF**: [`SignedCookies`] (HMAC-SHA256 with the
//!   app's [`Key`]), a [`Session`] in a signed `HttpOnly`, `SameSite=Lax` cookie whose
//!   expiry the server checks, and a per-session [`Csrf`] token rendered into forms
//!   and checked by [`CsrfGuard`] (`403` when missing or wrong).
//! - **Assets**: [`asset!("site.css")`](asset) is a compile-time checked,
//!   content-hashed link (`/static/site.3f9a1c0b.css`) that [`App::assets`] serves
//!   with `Cache-Control: immutable`.
//! - **An access log** ([`App::access_log`]) written off the request path, flushed
//!   and stopped by the [`Serving`] handle.
//! - **Behind a load balancer**: the real client as [`ClientAddr`] (and in the log),
//!   believed only from [`App::trusted_proxies`]; [`healthz`] answers `503` from the
//!   moment the server drains (`docs/deploy.md`).
//! - **Databases** (`kiln::db`, cargo features `sqlite` and `postgres`):
//!   the app's statements with `$1` placeholders on both backends, rows into the
//!   app's types with `#[derive(FromRow)]`, transactions, migrations embedded at
//!   compile time; SQLite on threads of its own, PostgreSQL pipelined per worker;
//!   a missing row is a `404`, a conflict a `409`, an unreachable database a `503`.
//! - **Real time** ([`realtime`]): Server-Sent Events ([`realtime::Sse`]) sent as
//!   produced, with keep-alive comments and a resume from `Last-Event-ID`, ending
//!   cleanly when the server drains.
//! - **Layers**: [`Compression`] (brotli, zstd, gzip, streamed bodies too; each coding
//!   a cargo feature), [`Cors`], [`RateLimit`] (`429` with `Retry-After`, one count for
//!   all workers, bounded memory), [`Metrics`] (`/metrics` in Prometheus' text format)
//!   and request spans; kiln's events go through `tracing`.
//! - **APIs**: [`BearerToken`]s signed with the app's [`Key`], [`blocking`] work on a
//!   bounded pool, `?` on database errors in handlers returning [`Rejection`].
//! - **The API contract** (cargo feature `openapi`, `docs/openapi.md`): `App::openapi`,
//!   an OpenAPI 3.1 document derived from the routes, their extractors and outputs, with
//!   schemas from schemars; handlers given to `App::api` are described from their
//!   types; `kiln::openapi::assert_matches` fails a test when the API breaks its
//!   committed copy. `Valid<Json<T>>` (feature `validate`) checks `T`'s garde
//!   constraints, answering `422` with every failing field.
//! - **Typed clients** of the same routes: `Document::typescript` writes a TypeScript
//!   client of the document (one `fetch` function per operation, bodies typed by
//!   status); `kiln::client::Client` (feature `client`) calls a handler over HTTP with
//!   its route and body types and returns its output type.
//! - **WebSocket** on a typed route ([`ws::WebSocketUpgrade`]): RFC 6455 with
//!   permessage-deflate, a heartbeat, bounded queues and limits, closed with 1001 on
//!   drain, as an HTTP/1.1 upgrade or an HTTP/2 stream (RFC 8441); the Autobahn
//!   testsuite runs against it (`scripts/autobahn`).
//! - **Live views** ([`live`]): typed state on the server rendered with
//!   [`live_html!`], typed events from the page, only the slots that changed sent back
//!   (lists by key, as moves); driven in tests by [`live::LiveTest`].
//! - `HEAD` from `GET`, `405` with `Allow`, a trailing-slash policy, [middleware],
//!   and an in-process [`TestClient`](test::TestClient).
//!
//! # Cargo features
//!
//! None is on by default: a first app builds what every app runs, about as fast as
//! axum's hello (the README's "Cargo features" table has what each adds to a clean
//! build). Turn on what the app uses:
//!
//! - `gzip`, `brotli`, `zstd`: the codings [`Compression`] offers, one each (libdeflate
//!   and zlib-rs; Google's C brotli; the C zstd library).
//! - `ws-deflate`: WebSocket permessage-deflate (RFC 7692, zlib-rs); without it the
//!   handshake declines the extension.
//! - `sqlite`: `kiln::db` on embedded SQLite (its C source, bundled).
//! - `postgres`: `kiln::db` on PostgreSQL (kiln's pipelined connection, TLS by rustls).
//! - `chrono`, `time`: dates and timestamps in `kiln::db` as those crates' types.
//! - `tls`: HTTPS in process, `kiln::http::Server::tls` (rustls on ring).
//! - `maud`: `maud::Markup` as a response.
//!
//! ```
//! use kiln::{App, Json, Route};
//! use serde::Serialize;
//!
//! #[derive(Route)]
//! #[route("/writings/{page}")]
//! struct Writing {
//!     page: u32,
//!     lang: Option<String>,
//! }
//!
//! #[derive(Serialize)]
//! struct Page {
//!     number: u32,
//!     next: String,
//! }
//!
//! async fn writing(route: Writing) -> Json<Page> {
//!     let next = Writing { page: route.page + 1, lang: route.lang };
//!     Json(Page { number: route.page, next: next.to_string() })
//! }
//!
//! let app = App::new(|_worker| ()).route(writing);
//! # let mut client = kiln::test::TestClient::new(app);
//! # let res = client.get("/writings/7?lang=fr");
//! # assert_eq!(res.text(), r#"{"number":7,"next":"/writings/8?lang=fr"}"#);
//! // kiln::serve(app, kiln::http::Server::new())?.run_until_signal()?;
//! ```

extern crate self as kiln;

pub mod access_log;
mod app;
mod asset;
mod blocking;
#[cfg(feature = "client")]
pub mod client;
mod client_addr;
mod config;
mod cookie;
mod csrf;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod db;
mod dispatch;
mod extract;
mod fields;
mod form;
mod form_data;
mod handler;
mod health;
mod html;
mod json;
mod key;
mod layers;
mod link;
pub mod live;
mod make;
pub mod markup;
#[cfg(feature = "maud")]
mod maud_render;
pub mod middleware;
pub mod multipart;
#[cfg(feature = "openapi")]
pub mod openapi;
mod problem;
mod problem_scope;
pub mod realtime;
pub mod rejection;
mod response;
mod route;
mod router;
mod secure_headers;
mod security;
mod serve;
mod session;
mod signed;
pub mod static_files;
pub mod test;
#[cfg(feature = "validate")]
mod valid;
#[cfg(feature = "validate")]
mod valid_names;
pub mod ws;

pub use kiln_http as http;
pub use kiln_http::{Bytes, Method, Request, Response, StatusCode};
pub use kiln_macros::{Route, asset};

pub use app::App;
pub use asset::{ASSET_PREFIX, IMMUTABLE};
pub use blocking::{BlockingPool, DEFAULT_QUEUE_PER_THREAD, blocking};
pub use client_addr::ClientAddr;
pub use config::{DEFAULT_BODY_LIMIT, DEFAULT_SESSION_TTL};
pub use cookie::{Cookies, SetCookie};
pub use csrf::{CSRF_COOKIE, CSRF_FIELD, CSRF_HEADER, Csrf, CsrfField, CsrfGuard};
pub use dispatch::{AppFactory, AppService};
pub use extract::{FromRequest, FromRequestAsync, Headers, RequestContext, RequestHead, State};
pub use fields::{CookieFields, HeaderFields};
pub use form::{Form, Query};
pub use handler::{Handler, RouteHandler};
pub use health::{Healthz, healthz};
pub use html::Html;
pub use json::Json;
pub use key::{Key, KeyTooShort, MIN_KEY_BYTES, random_token};
pub use layers::{Compression, Cors, DEFAULT_COMPRESSION_MIN_SIZE, Encoding, Levels, Metrics, RateLimit};
pub use link::{Absolute, PublicUrl};
pub use make::{IntoMakeService, MakeService, StateError};
#[cfg(feature = "maud")]
pub use maud_render::{Int, Rendered, Reserve, Text};
pub use problem::PROBLEM_JSON;
pub use rejection::Rejection;
pub use response::{Css, Header, IntoResponse, IntoResponseParts, JavaScript, Redirect, Rss, Typed, Xml};
pub use route::Route;
pub use router::{BuildError, TrailingSlash};
pub use secure_headers::SecureHeaders;
pub use security::{BEARER_CONTEXT, BearerToken};
pub use serve::{ServeError, Serving, serve};
pub use session::{SESSION_COOKIE, Session, SessionCookies};
pub use signed::SignedCookies;
#[cfg(feature = "validate")]
pub use valid::{Payload, Valid};

/// Route matching support; [`PathParams`](routing::PathParams) is what a route is
/// built from.
pub mod routing {
    pub use crate::route::PathParams;
}

#[doc(hidden)]
pub use extract::route_from_request as __route_from_request;
#[doc(hidden)]
pub use route::__private;

/// The README's example, compiled by `cargo test` so that it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
