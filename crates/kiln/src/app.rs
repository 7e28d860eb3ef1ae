//! The app builder: routes, fallback, rejection rendering and policies, checked once
//! at start-up and then shared read-only by every worker.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use kiln_http::{Method, Response};

use crate::handler::{Erased, ErasedHandler, Handler, RouteHandler};
use crate::rejection::Rejection;
use crate::route::Route;
use crate::service::AppFactory;

/// Largest body [`Json`](crate::Json) and [`Form`](crate::Form) accept by default.
pub const DEFAULT_BODY_LIMIT: usize = 256 * 1024;

/// What a request for `/a/` gets when only `/a` exists (and the other way round).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrailingSlash {
    /// `308 Permanent Redirect` to the path that exists, keeping the query.
    #[default]
    Redirect,
    /// `404 Not Found`: paths match exactly.
    Strict,
}

pub(crate) type RenderRejection = dyn Fn(&Rejection, &mut Response) + Send + Sync;
type StateFactory<S> = dyn Fn(usize) -> S + Send + Sync;

/// One method on one pattern, as registered.
pub(crate) struct RouteEntry<S> {
    pub(crate) pattern: Cow<'static, str>,
    pub(crate) method: Method,
    /// Names the route in conflict reports: its type, or what registered it.
    pub(crate) name: Cow<'static, str>,
    pub(crate) handler: Arc<dyn ErasedHandler<S>>,
}

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
    pub(crate) state: Arc<StateFactory<S>>,
    pub(crate) routes: Vec<RouteEntry<S>>,
    pub(crate) fallback: Option<Arc<dyn ErasedHandler<S>>>,
    pub(crate) render: Option<Arc<RenderRejection>>,
    pub(crate) trailing_slash: TrailingSlash,
    pub(crate) body_limit: usize,
}

impl<S: 'static> App<S> {
    /// An app whose state is built once per worker by `state(worker_index)`, on the
    /// worker's own thread, so it may be `!Send` and needs no locks.
    pub fn new(state: impl Fn(usize) -> S + Send + Sync + 'static) -> Self {
        App {
            state: Arc::new(state),
            routes: Vec::new(),
            fallback: None,
            render: None,
            trailing_slash: TrailingSlash::default(),
            body_limit: DEFAULT_BODY_LIMIT,
        }
    }

    /// Answers a typed route with `handler`. The route is the handler's first
    /// argument, so the handler says what it answers: `async fn show(page: Writing)`.
    pub fn route<H: RouteHandler<A, S>, A: 'static>(mut self, handler: H) -> Self {
        self.routes.push(RouteEntry {
            pattern: Cow::Borrowed(H::Route::PATTERN),
            method: H::Route::METHOD,
            name: Cow::Borrowed(std::any::type_name::<H::Route>()),
            handler: Arc::new(Erased::new(handler)),
        });
        self
    }

    /// Registers a handler under a raw `matchit` pattern, for framework parts (static
    /// files) whose routes are not types. `name` appears in conflict reports.
    #[allow(dead_code)]
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
        });
        self
    }

    /// Answers requests that match no route (any method); by default they get the
    /// `NotFound` rejection.
    pub fn fallback<A: 'static>(mut self, handler: impl Handler<A, S>) -> Self {
        self.fallback = Some(Arc::new(Erased::new(handler)));
        self
    }

    /// Renders rejections the app's way, for example as JSON. A `405` still gets its
    /// `Allow` header.
    pub fn on_rejection(mut self, render: impl Fn(&Rejection, &mut Response) + Send + Sync + 'static) -> Self {
        self.render = Some(Arc::new(render));
        self
    }

    /// Sets the trailing-slash policy (default: [`TrailingSlash::Redirect`]).
    pub fn trailing_slash(mut self, policy: TrailingSlash) -> Self {
        self.trailing_slash = policy;
        self
    }

    /// Sets the largest body `Json` and `Form` accept (default [`DEFAULT_BODY_LIMIT`]).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Applies `f`: lets a module add its routes with one line,
    /// `app.mount(bench_routes::mount)`.
    pub fn mount(self, f: impl FnOnce(Self) -> Self) -> Self {
        f(self)
    }

    /// Checks the routes (conflicts, patterns) and prepares the per-worker factory.
    pub fn build(self) -> Result<AppFactory<S>, BuildError> {
        AppFactory::build(self)
    }
}

impl<S> fmt::Debug for App<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let routes: Vec<_> = self.routes.iter().map(|r| format!("{} {} ({})", r.method, r.pattern, r.name)).collect();
        f.debug_struct("App").field("routes", &routes).field("trailing_slash", &self.trailing_slash).finish()
    }
}

/// Why an app could not be built: found at start-up, never on the request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// Two routes would answer the same requests.
    Conflict {
        /// The route registered first: `name (METHOD pattern)`.
        first: String,
        /// The route that conflicts with it.
        second: String,
    },
    /// A pattern the router refuses.
    InvalidPattern {
        /// The route: `name (METHOD pattern)`.
        route: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Conflict { first, second } => write!(f, "route {second} conflicts with route {first}"),
            BuildError::InvalidPattern { route, reason } => write!(f, "route {route} has an invalid pattern: {reason}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl<S> RouteEntry<S> {
    pub(crate) fn describe(&self) -> String {
        format!("`{}` ({} {})", self.name, self.method, self.pattern)
    }
}
