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
//!
//! Each request runs as a task of its own, as on a server, and a handler that panics
//! is answered `500` as the server answers it. Requests are parsed under the engine's
//! [`Limits`] (the defaults a [`Server`](kiln_http::Server) has, or the server's own
//! through [`limits`](TestClient::limits)): one the server would refuse (a body over
//! `max_body_bytes`: `413`) gets the server's answer. Cookies are the test's to send, unless
//! the client [keeps them](TestClient::keep_cookies) as a browser would.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::rc::Rc;

use kiln_http::{Limits, RequestBytes, Response, Service, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::make::{IntoMakeService, MakeService};

/// Sends requests to one worker's service, in-process, one at a time.
pub struct TestClient<S> {
    service: Rc<S>,
    runtime: tokio::runtime::Runtime,
    /// What the engine's parser allows, as on the server.
    limits: Limits,
    /// The cookies the responses set, by name, when the client keeps them.
    jar: Option<BTreeMap<String, String>>,
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
        TestClient { service: Rc::new(make.make_service(0)), runtime, limits: Limits::default(), jar: None }
    }

    /// Parses requests under `limits`, the ones the app's server is given
    /// ([`Server::limits`](kiln_http::Server::limits)), instead of the defaults.
    ///
    /// ```
    /// use kiln::{App, Bytes, Route, http::Limits, test::TestClient};
    ///
    /// #[derive(Route)]
    /// #[route(POST, "/upload")]
    /// struct Upload;
    ///
    /// async fn upload(_: Upload, body: Bytes) -> String { format!("{} bytes", body.len()) }
    ///
    /// let limits = Limits { max_body_bytes: 1000, ..Limits::default() };
    /// let mut client = TestClient::new(App::new(|_| ()).route(upload)).limits(limits);
    /// assert_eq!(client.request("POST", &Upload).body(vec![b'x'; 1000]).send().text(), "1000 bytes");
    /// let res = client.request("POST", &Upload).body(vec![b'x'; 1001]).send();
    /// assert_eq!(res.status(), 413);
    /// assert!(res.text().starts_with("request body too large: over the 1000-byte limit"));
    /// ```
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Keeps the cookies responses set and sends them back, as a browser does: a
    /// login's session cookie reaches the next request. A cookie set with `Max-Age=0`
    /// (or an `Expires` in the past: any `Expires` with an empty value) is dropped. A
    /// request that sets its own `Cookie` header sends that instead.
    ///
    /// ```
    /// use kiln::{App, Key, Route, Session, SessionCookies, test::TestClient};
    ///
    /// #[derive(Route)]
    /// #[route(POST, "/login")]
    /// struct Login;
    ///
    /// #[derive(Route)]
    /// #[route("/me")]
    /// struct Me;
    ///
    /// async fn login(_: Login, session: Session) -> (SessionCookies, &'static str) {
    ///     (session.start("ada"), "welcome")
    /// }
    ///
    /// async fn me(_: Me, session: Session) -> String {
    ///     session.user().unwrap_or("nobody").to_owned()
    /// }
    ///
    /// let app = App::new(|_| ()).secret_key(Key::generate()).route(login).route(me);
    /// let mut client = TestClient::new(app).keep_cookies();
    /// client.request("POST", &Login).send();
    /// assert_eq!(client.get(&Me).text(), "ada");
    /// assert!(client.cookie("kiln_session").is_some());
    /// ```
    pub fn keep_cookies(mut self) -> Self {
        self.jar = Some(BTreeMap::new());
        self
    }

    /// The value of the kept cookie `name`; see [`keep_cookies`](Self::keep_cookies).
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.jar.as_ref()?.get(name).map(String::as_str)
    }

    /// The `Cookie` header the jar sends, if it keeps any.
    fn cookie_header(&self) -> Option<String> {
        let jar = self.jar.as_ref().filter(|jar| !jar.is_empty())?;
        Some(jar.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join("; "))
    }

    /// Keeps (or drops) what each `Set-Cookie` of `res` says.
    fn store_cookies(&mut self, res: &TestResponse) {
        let Some(jar) = self.jar.as_mut() else { return };
        for line in res.header_all("set-cookie") {
            let mut attributes = line.split(';').map(str::trim);
            let Some((name, value)) = attributes.next().and_then(|pair| pair.split_once('=')) else { continue };
            let removed = attributes.any(|a| {
                let a = a.to_ascii_lowercase();
                a == "max-age=0" || a.starts_with("max-age=-") || a == "expires="
            });
            if removed || value.is_empty() {
                jar.remove(name);
            } else {
                jar.insert(name.to_owned(), value.to_owned());
            }
        }
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
            chunks: Vec::new(),
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
    /// The lengths of the chunks a streamed body is handed over in
    /// ([`body_chunks`](Self::body_chunks)); empty: one chunk.
    chunks: Vec<usize>,
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
        self.chunks.clear();
        self
    }

    /// Sets the body (and its `Content-Length`) as these chunks: a route whose body is
    /// streamed ([`App::stream_body`](crate::App::stream_body)) reads them one at a
    /// time from [`body_stream`](kiln_http::Request::body_stream), as from a client
    /// whose upload arrives over several reads; any other route sees the whole body.
    pub fn body_chunks<C: AsRef<[u8]>>(mut self, chunks: impl IntoIterator<Item = C>) -> Self {
        self.body.clear();
        self.chunks.clear();
        for chunk in chunks {
            self.body.extend_from_slice(chunk.as_ref());
            self.chunks.push(chunk.as_ref().len());
        }
        self
    }

    /// Sets a JSON body and `Content-Type: application/json`.
    pub fn json(self, value: &impl Serialize) -> Self {
        let body = serde_json::to_vec(value).expect("serialisable");
        self.header("Content-Type", "application/json").body(body)
    }

    /// A `multipart/form-data` body (RFC 7578) of `(name, file name, bytes)` fields,
    /// in order; a field with a file name is a file.
    ///
    /// ```
    /// # use kiln::{App, Route, multipart::Multipart};
    /// # #[derive(Route)]
    /// # #[route(POST, "/up")]
    /// # struct Up;
    /// async fn up(_: Up, form: Multipart) -> Result<String, kiln::rejection::Rejection> {
    ///     Ok(form.collect().await?.text("note")?.to_owned())
    /// }
    /// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(up));
    /// let res = client.request("POST", &Up).multipart(&[("note", None, b"hi".as_slice())]).send();
    /// assert_eq!(res.text(), "hi");
    /// ```
    pub fn multipart(self, fields: &[(&str, Option<&str>, &[u8])]) -> Self {
        const BOUNDARY: &str = "kiln-test-boundary-7MA4YWxkTrZu0gW";
        let mut body = Vec::new();
        for (name, file_name, bytes) in fields {
            body.extend_from_slice(
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"").as_bytes(),
            );
            if let Some(file_name) = file_name {
                body.extend_from_slice(
                    format!("; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream").as_bytes(),
                );
            }
            body.extend_from_slice(b"\r\n\r\n");
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        self.header("Content-Type", &format!("multipart/form-data; boundary={BOUNDARY}")).body(body)
    }

    /// Sets a form body and `Content-Type: application/x-www-form-urlencoded`.
    pub fn form(self, value: &impl Serialize) -> Self {
        let body = serde_urlencoded::to_string(value).expect("serialisable");
        self.header("Content-Type", "application/x-www-form-urlencoded").body(body)
    }

    /// Sends the request through the engine's parser and the service, and returns
    /// the response as a client would see it (no body for `HEAD`). A request the
    /// server would refuse before the app sees it (over a limit, malformed) gets the
    /// server's answer, as the server would send it.
    pub fn send(self) -> TestResponse {
        self.send_reading(0)
    }

    /// Sends the request like [`send`](Self::send), and reads a streamed response's
    /// body (`Response::set_body_stream`: Server-Sent Events, a download made as it
    /// goes) until it ends or `max_bytes` have come, whichever is first: an endless
    /// stream is cut there rather than hanging the test. [`send`](Self::send) leaves a
    /// streamed body unread.
    pub fn send_streaming(self, max_bytes: usize) -> TestResponse {
        self.send_reading(max_bytes)
    }

    fn send_reading(self, max_stream: usize) -> TestResponse {
        let mut raw = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        // HTTP/1.1 needs a `Host` (RFC 9112 §3.2); the test's own, if it set one.
        if !self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            raw.push_str("Host: test\r\n");
        }
        if !self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("cookie")) {
            if let Some(cookies) = self.client.cookie_header() {
                raw.push_str(&format!("Cookie: {cookies}\r\n"));
            }
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
        let client = self.client;
        let service = Rc::clone(&client.service);
        let parsed = match RequestBytes::parse_for(bytes, peer, &client.limits, |req| service.body_mode(req)) {
            Ok(mut parsed) => {
                parsed.stream_in_chunks(&self.chunks);
                parsed
            }
            Err(refusal) => {
                let mut res = Response::new();
                refusal.render(&mut res);
                let mut res = TestResponse::from_response(&res, self.method == "HEAD");
                res.headers.push(("Connection".to_owned(), "close".to_owned()));
                return res;
            }
        };
        // A task of its own, as each connection's is on a server: what a request may
        // ask of `tokio::task` (its id) is there, and a panic ends only the task.
        let call = async move {
            let mut res = Response::new();
            service.call(parsed.request(), &mut res).await;
            let mut streamed = Vec::new();
            if let Some(mut stream) = res.take_body_stream().filter(|_| max_stream > 0) {
                while streamed.len() < max_stream {
                    match std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
                        Some(Ok(chunk)) => streamed.extend_from_slice(&chunk),
                        Some(Err(_)) | None => break,
                    }
                }
                streamed.truncate(max_stream);
                res.body_mut().extend_from_slice(&streamed);
            }
            res
        };
        let local = tokio::task::LocalSet::new();
        let res = local.block_on(&client.runtime, async { tokio::task::spawn_local(call).await });
        let res = match res {
            Ok(res) => TestResponse::from_response(&res, self.method == "HEAD"),
            // The server answers a panicking handler so, and goes on serving.
            Err(e) if e.is_panic() => {
                let body = b"internal server error\n".to_vec();
                let headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "22")];
                let headers = headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
                TestResponse { status: StatusCode::INTERNAL_SERVER_ERROR, headers, body }
            }
            Err(e) => panic!("the request's task did not finish: {e}"),
        };
        client.store_cookies(&res);
        res
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
