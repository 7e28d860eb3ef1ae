//! The app builder: routes, fallback, rejection rendering and policies, checked once
//! at start-up and then shared read-only by every worker.

use std::borrow::Cow;
use std::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use kiln_http::{Method, Response};

use crate::access_log::AccessLog;
use crate::config::Config;
use crate::dispatch::{AppFactory, StateFactory};
use crate::handler::{Erased, ErasedHandler, Handler, RouteHandler};
use crate::key::Key;
use crate::link::PublicUrl;
use crate::make::IntoMakeService;
use crate::rejection::Rejection;
use crate::route::Route;
use crate::router::{BuildError, RouteEntry, Router, TrailingSlash};

/// A web application: typed routes and their handlers, built once per worker.
///
/// ```
/// use kiln::{App, Route};
///
/// #[derive(Route)]
/// #[route("/hello/{name}")]
/// struct Hello { name: String }
///
/// async fn hello(route: Hello) -> String {
///     format!("Hello, {}!", route.name)
/// }
///
/// let app = App::new(|_worker| ()).route(hello);
/// let mut client = kiln::test::TestClient::new(app);
/// assert_eq!(client.get(&Hello { name: "kiln".into() }).text(), "Hello, kiln!");
/// ```
pub struct App<S> {
    state: Arc<StateFactory<S>>,
    routes: Vec<RouteEntry<S>>,
    fallback: Option<Arc<dyn ErasedHandler<S>>>,
    config: Config,
    /// A setting refused when it was given, reported by [`build`](Self::build).
    invalid: Option<BuildError>,
    trailing_slash: TrailingSlash,
    log: Option<AccessLog>,
    /// The first route whose handler needs the secret key, and the extractor that does.
    needs_key: Option<(Cow<'static, str>, &'static str)>,
    /// The document's routes, added when the app is built ([`App::openapi_routes`]).
    #[cfg(feature = "openapi")]
    served: Option<crate::openapi::Served>,
}

impl<S: 'static> App<S> {
    /// An app whose state is built once per worker by `state(worker_index)`, on the
    /// worker's own thread, so it may be `!Send` and needs no locks.
    pub fn new(state: impl Fn(usize) -> S + Send + Sync + 'static) -> Self {
        Self::with_factory(Arc::new(move |worker| Ok(state(worker))))
    }

    /// An app whose per-worker state may fail to build (a database that cannot be
    /// opened, a file that cannot be read). A failure stops the server:
    /// [`Serving::run_until_signal`](crate::Serving::run_until_signal) returns
    /// [`ServeError::State`](crate::ServeError::State) naming the worker and the error.
    ///
    /// ```
    /// use kiln::{App, ServeError, http::Server};
    ///
    /// let app = App::try_new(|worker| if worker == 0 { Ok(()) } else { Err("no database") });
    /// let server = Server::new().listen(std::net::SocketAddr::from(([127, 0, 0, 1], 0))).workers(2);
    /// let err = kiln::serve(app, server).unwrap().run_until_signal().unwrap_err();
    /// assert!(matches!(err, ServeError::State(_)));
    /// assert_eq!(err.to_string(), "the state of worker 1 could not be built: no database");
    /// ```
    pub fn try_new<E>(state: impl Fn(usize) -> Result<S, E> + Send + Sync + 'static) -> Self
    where
        E: Into<Box<dyn Error + Send + Sync>>,
    {
        Self::with_factory(Arc::new(move |worker| state(worker).map_err(Into::into)))
    }

    fn with_factory(state: Arc<StateFactory<S>>) -> Self {
        App {
            state,
            routes: Vec::new(),
            fallback: None,
            config: Config::default(),
            invalid: None,
            trailing_slash: TrailingSlash::default(),
            log: None,
            needs_key: None,
            #[cfg(feature = "openapi")]
            served: None,
        }
    }

    /// Answers a typed route with `handler`. The route is the handler's first
    /// argument, so the handler says what it answers: `async fn show(page: Writing)`.
    pub fn route<H: RouteHandler<A, S>, A: 'static>(mut self, handler: H) -> Self {
        if let (None, Some(extractor)) = (&self.needs_key, H::NEEDS_SECRET_KEY) {
            self.needs_key = Some((Cow::Borrowed(std::any::type_name::<H::Route>()), extractor));
        }
        self.routes.push(RouteEntry {
            pattern: Cow::Borrowed(H::Route::PATTERN),
            method: H::Route::METHOD,
            name: Cow::Borrowed(std::any::type_name::<H::Route>()),
            handler: Arc::new(Erased::new(handler)),
            stream_limit: None,
            websocket: H::WEBSOCKET,
            #[cfg(feature = "openapi")]
            describer: Some(crate::openapi::Describer::route::<H::Route>()),
        });
        self
    }

    /// Serves the live view `V` on its typed route (`V::Route`): the first answer is its
    /// whole page, mounted and rendered on the server (see [`crate::live`]).
    /// The same path, asked for a WebSocket, is the page's socket (asked for an event
    /// stream, and posted to, the same where a proxy blocks WebSocket: the app cannot
    /// have a `POST` route of its own on it); the client script
    /// is served once for all views, at [`crate::live`]'s content-hashed path.
    pub fn live<V: crate::live::LiveView<AppState = S>>(self) -> Self {
        let script = crate::live::client_path();
        let mut app = self;
        if !app.routes.iter().any(|r| r.pattern == script) {
            app = app.insert(script, Method::GET, "the live views' client script", crate::live::ClientScript);
        }
        // The page's events, when it runs over an event stream (no WebSocket).
        let events = crate::live::events::<V>();
        let app = app.insert(V::Route::PATTERN, Method::POST, std::any::type_name::<V::Route>(), events);
        app.route::<_, crate::live::MountArgs<V>>(crate::live::page::<V>())
    }

    /// Registers a handler under a raw `matchit` pattern, for framework parts (static
    /// files) whose routes are not types. `name` appears in conflict reports.
    pub(crate) fn insert<H: Handler<A, S>, A: 'static>(
        mut self,
        pattern: impl Into<Cow<'static, str>>,
        method: Method,
        name: impl Into<Cow<'static, str>>,
        handler: H,
    ) -> Self {
        self.routes.push(RouteEntry {
            pattern: pattern.into(),
            method,
            name: name.into(),
            handler: Arc::new(Erased::new(handler)),
            stream_limit: None,
            websocket: H::WEBSOCKET,
            #[cfg(feature = "openapi")]
            describer: None,
        });
        self
    }

    /// Answers requests that match no route (any method); by default they get the
    /// `NotFound` rejection.
    pub fn fallback<A: 'static, H: Handler<A, S>>(mut self, handler: H) -> Self {
        if let (None, Some(extractor)) = (&self.needs_key, H::NEEDS_SECRET_KEY) {
            self.needs_key = Some((Cow::Borrowed("the fallback"), extractor));
        }
        self.fallback = Some(Arc::new(Erased::new(handler)));
        self
    }

    /// Answers every rejection of requests under `prefix` as RFC 9457 problem details
    /// (`application/problem+json`): kiln's own (no route, a method not allowed, an
    /// extractor's refusal, a rate limit, an invalid input with its `errors` listed)
    /// and a [`Rejection`] a handler returns. Elsewhere, rejections render as before
    /// ([`on_rejection`](Self::on_rejection)), so pages keep their HTML. `/api` covers
    /// `/api` and `/api/...`; `/` covers the whole app; call it again for another prefix.
    ///
    /// ```
    /// use kiln::{App, Json, Route};
    ///
    /// #[derive(Route)]
    /// #[route(POST, "/api/echo")]
    /// struct Echo;
    ///
    /// async fn echo(_: Echo, Json(v): Json<serde_json::Value>) -> Json<serde_json::Value> {
    ///     Json(v)
    /// }
    ///
    /// let app = App::new(|_| ()).route(echo).problem_json("/api");
    /// let mut client = kiln::test::TestClient::new(app);
    /// let res = client.request("POST", "/api/echo").header("content-type", "application/json").body("{").send();
    /// assert_eq!(res.status(), 400);
    /// assert_eq!(res.header("content-type"), Some("application/problem+json"));
    /// let problem: serde_json::Value = res.json();
    /// assert_eq!(problem["status"], 400);
    /// assert_eq!(problem["instance"], "/api/echo");
    /// assert_eq!(client.get("/elsewhere").header("content-type"), Some("text/plain; charset=utf-8"));
    /// assert_eq!(client.get("/api/nothing").json::<serde_json::Value>()["status"], 404);
    /// ```
    pub fn problem_json(mut self, prefix: &str) -> Self {
        let problems = self.config.problems.get_or_insert_with(Default::default);
        Arc::make_mut(problems).add(prefix);
        self
    }

    /// Renders rejections the app's way, for example as JSON: those of routing and
    /// extractors, and a [`Rejection`] a handler returns (`Result<_, Rejection>`). A
    /// `405` still gets its `Allow` header.
    pub fn on_rejection(mut self, render: impl Fn(&Rejection, &mut Response) + Send + Sync + 'static) -> Self {
        self.config.render = Some(Arc::new(render));
        self
    }

    /// Adds [`SecureHeaders`](crate::SecureHeaders) to the app's responses: its pages
    /// may not be framed by other sites, and no response's type is sniffed.
    pub fn secure_headers(mut self, headers: crate::SecureHeaders) -> Self {
        self.config.secure_headers = Some(headers);
        self
    }

    /// Compresses responses as the client accepts ([`Compression`](crate::Compression)).
    pub fn compression(mut self, compression: crate::Compression) -> Self {
        self.config.layers.compression = Some(compression);
        self
    }

    /// Answers cross-origin requests as `cors` allows, for the paths under its prefix
    /// ([`Cors`](crate::Cors)); several policies may cover different prefixes, the
    /// first given that matches applying.
    pub fn cors(mut self, cors: crate::Cors) -> Self {
        self.config.layers.cors.push(cors);
        self
    }

    /// Announces `links`, made by [`asset!`](crate::asset), to every browser loading a
    /// page (a `GET` that accepts HTML) in a `103 Early Hints` (RFC 8297) with
    /// `Link: <…>; rel=preload`, sent over HTTP/2 as soon as the request arrives: the
    /// browser fetches the stylesheet while the page is made. Not over HTTP/1.1, where
    /// old clients break on a 1xx. The links are checked when the binary is built
    /// (`asset!`), and their files at start-up by
    /// [`App::try_assets_linked`](crate::App::try_assets_linked) given the same links, so
    /// a hint never names a file that is not served.
    ///
    /// ```
    /// use kiln::{App, asset};
    /// let app = App::new(|_| ()).early_hints(&[asset!("hello.txt")]);
    /// # let _ = app;
    /// ```
    pub fn early_hints(mut self, links: &[&str]) -> Self {
        let lines = crate::asset::preload_lines(links);
        self.config.early_hints = (!lines.is_empty()).then(|| lines.into());
        self
    }

    /// Runs each request in a `tracing` span named `request` (target `kiln::request`,
    /// fields `method` and `path`), so the events of its handler (and of kiln) carry
    /// them. The span is entered on each poll of the request's answer (layers,
    /// handler, layers), so a request answered at once enters it once. It is a root
    /// span: whatever span is entered on the thread when the request is answered is
    /// not its parent.
    ///
    /// What it costs is mostly the subscriber's. kiln's own part is a static callsite
    /// (the subscriber's interest cached there), two borrowed fields, no allocation: a
    /// subscriber whose filter does not want `kiln::request` spans costs about 10
    /// instructions a request. A subscriber that records them pays its registry:
    /// `tracing_subscriber::registry()` with a static `Targets` filter and a layer that
    /// only prints events adds about 800 instructions a request (a `/pong` is about
    /// 5,300), some 520 of them in the registry itself
    /// (bench/results/2026-11-25-session12-obs-cost); an `EnvFilter` adds a lock and a hash lookup on every enter, exit and
    /// close, and `tracing_subscriber::fmt`'s layer formats both fields into a string
    /// for every span, together about 5,000 more (bench/results/2026-11-25-metrics-cost).
    pub fn request_spans(mut self) -> Self {
        self.config.layers.request_spans = true;
        self
    }

    /// Refuses a client's requests past `limit` with `429 Too Many Requests` and
    /// `Retry-After` ([`RateLimit`](crate::RateLimit)), counted across every worker,
    /// for the requests it covers; each limit given applies.
    pub fn rate_limit(mut self, limit: crate::RateLimit) -> Self {
        if self.needs_key.is_none() && limit.needs_secret() {
            self.needs_key = Some((Cow::Borrowed("a rate limit"), "key_by_bearer_subject"));
        }
        self.config.layers.rate_limits.push(limit);
        self
    }

    /// Serves the app's metrics in Prometheus' text format ([`Metrics`](crate::Metrics)).
    pub fn metrics(mut self, metrics: crate::Metrics) -> Self {
        self.config.layers.metrics = Some(metrics);
        self
    }

    /// Sets the trailing-slash policy (default: [`TrailingSlash::Redirect`]).
    pub fn trailing_slash(mut self, policy: TrailingSlash) -> Self {
        self.trailing_slash = policy;
        self
    }

    /// Streams the body of route `R`'s requests, up to `max_bytes` (which may be far
    /// above the global [`Limits::max_body_bytes`](kiln_http::Limits)): the handler
    /// reads it as it goes, with [`Multipart`](crate::multipart::Multipart) or
    /// [`Request::body_stream`](kiln_http::Request::body_stream), and the engine reads
    /// from the client only as fast as the handler asks, so a stalled upload holds one
    /// read buffer. Over `max_bytes`, `413`. `R` must be registered with
    /// [`route`](Self::route) first; [`build`](Self::build) refuses it otherwise.
    pub fn stream_body<R: Route>(mut self, max_bytes: u64) -> Self {
        let mut found = false;
        for entry in &mut self.routes {
            if entry.pattern == R::PATTERN && entry.method == R::METHOD {
                entry.stream_limit = Some(max_bytes);
                found = true;
            }
        }
        if !found && self.invalid.is_none() {
            let reason = format!(
                "{} is not registered: call `.route(handler)` before `.stream_body::<{0}>(…)`",
                std::any::type_name::<R>()
            );
            self.invalid = Some(BuildError::Setting { setting: "stream_body", reason });
        }
        self
    }

    /// Sets the largest body `Json` and `Form` accept (default
    /// [`DEFAULT_BODY_LIMIT`](crate::DEFAULT_BODY_LIMIT)).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// Logs every request to `log` (one line each, written off the request path); the
    /// handle [`serve`](crate::serve) returns flushes and stops it at the end. `None`
    /// leaves the log off.
    ///
    /// ```no_run
    /// use kiln::App;
    /// use kiln::access_log::{AccessLog, LogFormat, LogTarget};
    ///
    /// let log = AccessLog::open(LogTarget::File("access.log".into()), LogFormat::Combined);
    /// let app = App::new(|_| ()).access_log(log);
    /// kiln::serve(app, kiln::http::Server::new())?.run_until_signal()?;
    /// # Ok::<(), kiln::ServeError>(())
    /// ```
    pub fn access_log(mut self, log: impl Into<Option<AccessLog>>) -> Self {
        self.log = log.into();
        self
    }

    /// The address the site is reached at from outside, such as
    /// `https://example.org` or `https://example.org/wiki`: what
    /// [`PublicUrl`] makes absolute links from (a feed, a sitemap, an e-mail).
    /// A URL that is not `http(s)://host[/path]` makes [`build`](Self::build) fail.
    pub fn public_url(mut self, url: &str) -> Self {
        match PublicUrl::parse(url) {
            Ok(url) => self.config.public_url = Some(url),
            Err(reason) => self.invalid = Some(BuildError::Setting { setting: "public_url", reason }),
        }
        self
    }

    /// The key that signs cookies ([`SignedCookies`](crate::SignedCookies)), sessions
    /// ([`Session`](crate::Session)) and CSRF tokens ([`Csrf`](crate::Csrf)).
    pub fn secret_key(mut self, key: Key) -> Self {
        self.config.key = Some(key);
        self
    }

    /// How long a session lasts after it starts (default
    /// [`DEFAULT_SESSION_TTL`](crate::DEFAULT_SESSION_TTL)); checked on the server,
    /// whatever the browser keeps.
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.config.session_ttl = ttl;
        self
    }

    /// Marks session and CSRF cookies `Secure` (sent over HTTPS only): turn it on
    /// when the site is served over HTTPS.
    pub fn secure_cookies(mut self, secure: bool) -> Self {
        self.config.secure_cookies = secure;
        self
    }

    /// The proxies (load balancers) whose `Forwarded` / `X-Forwarded-For` headers name
    /// the client, for [`ClientAddr`](crate::ClientAddr) and the access log; usually
    /// the list given to [`Server::trusted_proxies`](kiln_http::Server::trusted_proxies).
    /// Nobody by default.
    pub fn trusted_proxies(mut self, trusted: kiln_http::TrustedProxies) -> Self {
        self.config.trusted_proxies = trusted;
        self
    }

    /// Applies `f`: lets a module add its routes with one line,
    /// `app.mount(bench_routes::mount)`.
    pub fn mount(self, f: impl FnOnce(Self) -> Self) -> Self {
        f(self)
    }

    /// Checks the routes (conflicts, patterns) and settings, and prepares the
    /// per-worker factory.
    pub fn build(self) -> Result<AppFactory<S>, BuildError> {
        #[cfg(feature = "openapi")]
        if self.served.is_some() {
            return crate::openapi::install_served(self).build();
        }
        if let Some(e) = self.invalid {
            return Err(e);
        }
        if let (Some((route, extractor)), None) = (&self.needs_key, &self.config.key) {
            let reason = format!(
                "{route} asks for `{extractor}`, which signs with the app's secret key, and the app has none: \
                 give it one with `App::secret_key`"
            );
            return Err(BuildError::Setting { setting: "secret_key", reason });
        }
        let (mut routes, mut fallback) = (self.routes, self.fallback);
        if let Some(problems) = &self.config.problems {
            for route in routes.iter_mut().filter(|route| problems.may_cover(&route.pattern)) {
                route.handler = crate::problem_scope::scope(problems, route.handler.clone());
            }
            fallback = fallback.map(|handler| crate::problem_scope::scope(problems, handler));
        }
        let router = Router::build(routes, fallback)?;
        let log = self.log.map(|log| log.trusted_proxies(self.config.trusted_proxies.clone()));
        Ok(AppFactory::new(router, self.config, self.trailing_slash, self.state, log))
    }
}

impl<S: 'static> IntoMakeService for App<S> {
    type MakeService = AppFactory<S>;

    fn into_make_service(self) -> Result<AppFactory<S>, BuildError> {
        self.build()
    }
}

impl<S> fmt::Debug for App<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes: Vec<_> = self.routes.iter().map(|r| format!("{} {} ({})", r.method, r.pattern, r.name)).collect();
        f.debug_struct("App").field("routes", &routes).field("trailing_slash", &self.trailing_slash).finish()
    }
}

/// What the API document (`kiln::openapi`) reads of the app.
#[cfg(feature = "openapi")]
impl<S> App<S> {
    /// Replaces the description of the route registered last.
    pub(crate) fn describe_last(mut self, describer: crate::openapi::Describer) -> Self {
        if let Some(entry) = self.routes.last_mut() {
            entry.describer = Some(describer);
        }
        self
    }

    /// Each described route: pattern, method and description.
    pub(crate) fn described_routes(&self) -> impl Iterator<Item = (&str, &Method, crate::openapi::Describer)> {
        self.routes.iter().filter_map(|e| Some((&*e.pattern, &e.method, e.describer?)))
    }

    /// Keeps what [`openapi_routes`](Self::openapi_routes) asked for until the build.
    pub(crate) fn serve_openapi(mut self, served: crate::openapi::Served) -> Self {
        self.served = Some(served);
        self
    }

    /// Takes what [`openapi_routes`](Self::openapi_routes) asked for, to install it.
    pub(crate) fn take_served(&mut self) -> Option<crate::openapi::Served> {
        self.served.take()
    }

    /// The prefixes whose rejections are problem details.
    pub(crate) fn problems(&self) -> Option<&crate::problem::Problems> {
        self.config.problems.as_deref()
    }

    /// The public URL, the document's server.
    pub(crate) fn public_url_str(&self) -> Option<&str> {
        self.config.public_url.as_deref()
    }
}
