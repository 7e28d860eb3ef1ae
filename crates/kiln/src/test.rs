//! An in-process client: drives an app's worker service with no socket, for tests.
//!
//! ```
//! use kiln::{App, Route, test::TestClient};
//!
//! #[derive(Route)]
//! #[route("/pong")]
//! struct Pong;
//!
//! async fn pong(_: Pong) -> &'static str {
//!     "PONG"
//! }
//!
//! let mut client = TestClient::new(App::new(|_| ()).route(pong));
//! let res = client.get(&Pong);
//! assert_eq!(res.status(), 200);
//! assert_eq!(res.text(), "PONG");
//! assert_eq!(client.request("POST", &Pong).send().status(), 405);
//! ```

use std::fmt;
use std::net::SocketAddr;

use kiln_http::{RequestBytes, Response, Service, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::make::{IntoMakeService, MakeService};

/// Sends requests to one worker's service, in-process, one at a time.
pub struct TestClient<S> {
    service: S,
    runtime: tokio::runtime::Runtime,
}

impl<S: Service> TestClient<S> {
    /// Builds worker 0's service from `app`. Panics, naming the conflict, if the app's
    /// routes are inconsistent.
    pub fn new<A>(app: A) -> Self
    where
        A: IntoMakeService,
        A::MakeService: MakeService<Service = S>,
    {
        let make = app.into_make_service().unwrap_or_else(|e| panic!("app does not build: {e}"));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("test runtime");
        TestClient { service: make.make_service(0), runtime }
    }

    /// `GET target`; the target is usually a typed route's value.
    pub fn get(&mut self, target: impl fmt::Display) -> TestResponse {
        self.request("GET", target).send()
    }

    /// A request to build up and [`send`](TestRequest::send).
    pub fn request(&mut self, method: &str, target: impl fmt::Display) -> TestRequest<'_, S> {
        TestRequest {
            client: self,
            method: method.to_owned(),
            target: target.to_string(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
}

impl<S> fmt::Debug for TestClient<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClient").finish_non_exhaustive()
    }
}

/// A request being built; see [`TestClient::request`].
#[derive(Debug)]
pub struct TestRequest<'c, S> {
    client: &'c mut TestClient<S>,
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl<S: Service> TestRequest<'_, S> {
    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the body (and its `Content-Length`).
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets a JSON body and `Content-Type: application/json`.
    pub fn json(self, value: &impl Serialize) -> Self {
        let body = serde_json::to_vec(value).expect("serialisable");
        self.header("Content-Type", "application/json").body(body)
    }

    /// Sets a form body and `Content-Type: application/x-www-form-urlencoded`.
    pub fn form(self, value: &impl Serialize) -> Self {
        let body = serde_urlencoded::to_string(value).expect("serialisable");
        self.header("Content-Type", "application/x-www-form-urlencoded").body(body)
    }

    /// Sends the request through the engine's parser and the service, and returns
    /// the response as a client would see it (no body for `HEAD`). Panics if the
    /// request is malformed.
    pub fn send(self) -> TestResponse {
        let mut raw = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        // HTTP/1.1 needs a `Host` (RFC 9112 §3.2); the test's own, if it set one.
        if !self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            raw.push_str("Host: test\r\n");
        }
        for (name, value) in &self.headers {
            raw.push_str(&format!("{name}: {value}\r\n"));
        }
        if !self.body.is_empty() {
            raw.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        raw.push_str("\r\n");
        let mut bytes = raw.into_bytes();
        bytes.extend_from_slice(&self.body);
        let peer = SocketAddr::from(([127, 0, 0, 1], 40000));
        let parsed = RequestBytes::parse(bytes, peer).unwrap_or_else(|e| panic!("malformed test request: {e}"));
        let mut res = Response::new();
        let client = self.client;
        let local = tokio::task::LocalSet::new();
        local.block_on(&client.runtime, client.service.call(parsed.request(), &mut res));
        TestResponse::from_response(&res, self.method == "HEAD")
    }
}

/// A response received by the [`TestClient`].
#[derive(Debug, Clone)]
pub struct TestResponse {
    status: StatusCode,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl TestResponse {
    fn from_response(res: &Response, head: bool) -> Self {
        let headers: Vec<(String, String)> = String::from_utf8_lossy(res.raw_headers())
            .split("\r\n")
            .filter_map(|line| line.split_once(": "))
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .collect();
        let mut body = res.body_bytes().map(<[u8]>::to_vec).unwrap_or_default();
        let mut response = TestResponse { status: res.status(), headers, body: Vec::new() };
        if let Some(len) = res.body_len() {
            response.headers.push(("Content-Length".to_owned(), len.to_string()));
        }
        if !head {
            response.body = std::mem::take(&mut body);
        }
        response
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Every value of header `name`, in order.
    pub fn header_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body.
    pub fn bytes(&self) -> &[u8] {
        &self.body
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON. Panics if it is not.
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not the expected JSON: {e}: {}", self.text()))
    }
}
