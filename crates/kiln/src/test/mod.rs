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
//! `max_body_bytes`: `413`) gets the server's answer. Cookies are the test's to send,
//! unless the client [keeps them](TestClient::keep_cookies) as a browser would.
//!
//! The client's tasks live as long as it does, as a worker's do, so several requests
//! can be open at once: a response that stays open ([`open`](TestRequest::open): an
//! event stream, read event by event with [`TestStream::next_event`]) or a WebSocket
//! ([`websocket`](TestRequest::websocket): [`TestWebSocket`]) goes on while the test
//! sends other requests, and each read waits at most the time the test gives it
//! ([`TimedOut`] past it), so a missing event fails the test instead of hanging it.

mod event;
mod request;
mod response;
mod stream;
mod websocket;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use kiln_http::{Limits, Service};

use crate::make::{IntoMakeService, MakeService};

pub use event::TestEvent;
pub use request::TestRequest;
pub use response::TestResponse;
pub use stream::TestStream;
pub use websocket::TestWebSocket;

/// Sends requests to one worker's service, in-process: each to its end with
/// [`send`](TestRequest::send), or left open with [`open`](TestRequest::open) and
/// [`websocket`](TestRequest::websocket) while others are sent.
pub struct TestClient<S> {
    service: Rc<S>,
    /// The worker's runtime and task set, shared with the streams and sockets open.
    driver: Rc<Driver>,
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
        let service = Rc::new(make.make_service(0));
        TestClient { service, driver: Rc::new(Driver::new()), limits: Limits::default(), jar: None }
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
    pub(super) fn cookie_header(&self) -> Option<String> {
        let jar = self.jar.as_ref().filter(|jar| !jar.is_empty())?;
        Some(jar.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join("; "))
    }

    /// Keeps (or drops) what each `Set-Cookie` of `res` says.
    pub(super) fn store_cookies(&mut self, res: &TestResponse) {
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
        TestRequest::new(self, method, target.to_string())
    }
}

impl<S> fmt::Debug for TestClient<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClient").finish_non_exhaustive()
    }
}

/// A current-thread runtime and the task set every request, stream and socket of one
/// client runs in, as a worker's: a task spawned by one request (a socket's loop, the
/// bus's inbox) goes on running whenever the test waits on any of them.
struct Driver {
    /// `Some` until dropped, inside the runtime (a task may hold a timer).
    tasks: Option<tokio::task::LocalSet>,
    runtime: tokio::runtime::Runtime,
}

impl Driver {
    fn new() -> Driver {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("test runtime");
        Driver { tasks: Some(tokio::task::LocalSet::new()), runtime }
    }

    /// Runs `f` to its end, and every task of the client meanwhile.
    fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.tasks.as_ref().expect("the task set lives as long as the driver").block_on(&self.runtime, f)
    }

    /// Starts `task` in the client's task set; it runs whenever the test waits.
    fn spawn<F: Future + 'static>(&self, task: F) -> tokio::task::JoinHandle<F::Output> {
        self.tasks.as_ref().expect("the task set lives as long as the driver").spawn_local(task)
    }

    /// [`block_on`](Self::block_on) for at most `limit`.
    fn within<F: Future>(&self, limit: Duration, f: F) -> Result<F::Output, TimedOut> {
        self.block_on(async { tokio::time::timeout(limit, f).await }).map_err(|_| TimedOut(limit))
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _runtime = self.runtime.enter();
        drop(self.tasks.take());
    }
}

/// Nothing came within the time a test gave a read ([`TestStream::next_event`],
/// [`TestWebSocket::recv`], ...): the read returns this instead of hanging the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut(pub Duration);

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nothing came within {:?}", self.0)
    }
}

impl std::error::Error for TimedOut {}
