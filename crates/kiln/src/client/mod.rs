//! The typed Rust client of a kiln app (feature `client`): [`Client::call`] takes the
//! app's own handler, a value of its route and its body, and returns what the handler
//! answers, so a service and its callers share one set of types and a change to either
//! side is a compile error on the other.
//!
//! ```no_run
//! use kiln::{Json, Route};
//! use kiln::client::Client;
//! use serde::{Deserialize, Serialize};
//!
//! /// Gets a page.
//! #[derive(Route)]
//! #[route("/api/pages/{slug}")]
//! struct GetPage { slug: String }
//!
//! #[derive(Serialize, Deserialize)]
//! struct Page { title: String }
//!
//! async fn get_page(route: GetPage) -> Json<Page> { Json(Page { title: route.slug }) }
//!
//! let client = Client::new("http://127.0.0.1:8080");
//! // The handler names the types: the route it takes, no body (`()`), a `Page` back.
//! let page: Page = client.call(get_page, &GetPage { slug: "tour".into() }, ())?;
//! # Ok::<(), kiln::client::Error>(())
//! ```
//!
//! A body the handler does not read is a compile error, as is a route of another
//! handler:
//!
//! ```compile_fail
//! # use kiln::{Json, Route};
//! # use kiln::client::Client;
//! #[derive(Route)]
//! #[route(POST, "/double")]
//! struct Double;
//!
//! async fn double(_: Double, Json(n): Json<i64>) -> Json<i64> { Json(2 * n) }
//!
//! // `double` reads an `i64`, not a string.
//! let four: i64 = Client::new("http://127.0.0.1:8080").call(double, &Double, "two")?;
//! # Ok::<(), kiln::client::Error>(())
//! ```
//!
//! The handler is passed for its type only, never run. Its route gives the method and
//! the path with its query (`Display`); the argument that is a `Json<T>` or `Form<T>`
//! says what the body is and how it is encoded; the output (`Json<T>`, `String`, `()`,
//! or a `Result` of one) says how a success reads. Anything else the server answers
//! is an [`Error`] with its status and body. The client blocks (ureq): call it from a
//! test, a tool or `kiln::blocking`, not on a server's event loop.

mod operation;

use std::fmt;
use std::time::Duration;

use ureq::Agent;
use ureq::http;

pub use operation::{Answer, BodyExtractor, Callable, Sends, at};

/// How long one call may take, connecting and reading included, unless
/// [`Client::timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A client of one server: its base URL, the headers sent with every call.
#[derive(Debug, Clone)]
pub struct Client {
    agent: Agent,
    base: String,
    headers: Vec<(String, String)>,
}

/// Why a call did not return the handler's success: the server answered an error
/// status ([`status`](Self::status), [`body`](Self::body)), or the request did not
/// get through, or the answer did not read as the handler's output type.
#[derive(Debug)]
pub struct Error {
    status: Option<u16>,
    body: String,
    message: String,
    decode: bool,
}

impl Error {
    /// The status of an answer that was not a success (`400` and up).
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The body of that answer, as text (the app's rejection message).
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The body of that answer read as JSON: the problem details (RFC 9457) of an app
    /// that answers with them (`App::problem_json`), or the handler's own error type.
    /// `None` when it does not read as a `T`.
    pub fn body_json<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_str(&self.body).ok()
    }

    /// Whether the request did not get through (connection, timeout, TLS).
    pub fn is_transport(&self) -> bool {
        self.status.is_none() && !self.decode
    }

    /// Whether a success's body did not read as the handler's output type: the
    /// server and the client were built from different versions of the types.
    pub fn is_decode(&self) -> bool {
        self.decode
    }

    fn transport(error: impl fmt::Display) -> Self {
        Error { status: None, body: String::new(), message: error.to_string(), decode: false }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "{status}: {}", self.body.trim()),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

impl Client {
    /// A client of the server at `base` (`http://127.0.0.1:8080`, or with a path
    /// prefix the routes are mounted under).
    pub fn new(base: impl Into<String>) -> Self {
        Client {
            agent: agent(DEFAULT_TIMEOUT),
            base: base.into().trim_end_matches('/').to_owned(),
            headers: Vec::new(),
        }
    }

    /// Sends `Authorization: Bearer {token}` with every call: what a
    /// [`BearerToken`](crate::BearerToken) argument reads.
    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    /// Sends `name: value` with every call.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// How long one call may take ([`DEFAULT_TIMEOUT`] by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.agent = agent(timeout);
        self
    }

    /// Calls `handler`'s operation: `route`'s method and path, `body` encoded as the
    /// handler reads it (`()` for a handler without a body), and the answer read as
    /// the handler's output. `handler` is not run; it names the types.
    pub fn call<H, A, B, I>(&self, handler: H, route: &H::Route, body: B) -> Result<H::Data, Error>
    where
        H: Callable<A>,
        A: Sends<B, I>,
    {
        let _ = handler;
        let url = format!("{}{route}", self.base);
        let method = <H::Route as crate::Route>::METHOD;
        let mut request = http::Request::builder().method(method.as_str()).uri(&url);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let bytes = match A::encode(&body).map_err(Error::transport)? {
            Some((content_type, bytes)) => {
                request = request.header("content-type", content_type);
                bytes
            }
            None => Vec::new(),
        };
        let request = request.body(bytes).map_err(Error::transport)?;
        let mut response = self.agent.run(request).map_err(Error::transport)?;
        let status = response.status().as_u16();
        let bytes = response.body_mut().read_to_vec().map_err(Error::transport)?;
        if status >= 400 {
            let body = String::from_utf8_lossy(&bytes).into_owned();
            return Err(Error { status: Some(status), message: String::new(), body, decode: false });
        }
        H::decode(&bytes).map_err(|e| Error {
            decode: true,
            ..Error::transport(format!("{method} {url}: the answer does not read: {e}"))
        })
    }
}

/// An agent that gives every status back to be read, rather than as an error.
fn agent(timeout: Duration) -> Agent {
    Agent::config_builder().http_status_as_error(false).timeout_global(Some(timeout)).build().into()
}
