//! The route table: every pattern with its handlers per method, checked for conflicts
//! once at start-up and then read by every worker.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use kiln_http::Method;

use crate::handler::ErasedHandler;

/// What a request for `/a/` gets when only `/a` exists (and the other way round).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrailingSlash {
    /// `308 Permanent Redirect` to the path that exists, keeping the query.
    #[default]
    Redirect,
    /// `404 Not Found`: paths match exactly.
    Strict,
}

/// One method on one pattern, as registered.
pub(crate) struct RouteEntry<S> {
    pub(crate) pattern: Cow<'static, str>,
    pub(crate) method: Method,
    /// Names the route in conflict reports: its type, or what registered it.
    pub(crate) name: Cow<'static, str>,
    pub(crate) handler: Arc<dyn ErasedHandler<S>>,
    /// The body limit of a route whose body is streamed (`App::stream_body`).
    pub(crate) stream_limit: Option<u64>,
    /// The handler takes a WebSocket handshake.
    pub(crate) websocket: bool,
    /// How the API document describes it; `None` for kiln's own routes (static files).
    #[cfg(feature = "openapi")]
    pub(crate) describer: Option<crate::openapi::Describer>,
}

impl<S> RouteEntry<S> {
    pub(crate) fn describe(&self) -> String {
        format!("`{}` ({} {})", self.name, self.method, self.pattern)
    }
}

/// Every method registered on one pattern.
pub(crate) struct Endpoint<S> {
    pub(crate) pattern: Cow<'static, str>,
    methods: Vec<(Method, Arc<dyn ErasedHandler<S>>)>,
    /// The `Allow` header for a 405, rendered once at start-up.
    pub(crate) allow: String,
    get: Option<usize>,
    /// The `GET` handler takes a WebSocket handshake: it answers extended CONNECT too.
    websocket: bool,
    /// Methods whose bodies are streamed, with their limits.
    streamed: Vec<(Method, u64)>,
    /// Some rate limit of the app may cover a request routed here: decided once at
    /// build time ([`Router::mark_rate_limited`]), so that a route no limit names
    /// pays nothing for the limits of others.
    pub(crate) rate_limited: bool,
}

impl<S> Endpoint<S> {
    /// The handler for `method`; `HEAD` falls back to `GET` (RFC 9110 §9.3.2), the
    /// engine dropping the body and keeping `Content-Length`.
    pub(crate) fn handler(&self, method: &str) -> Option<&dyn ErasedHandler<S>> {
        if let Some((_, h)) = self.methods.iter().find(|(m, _)| m.as_str() == method) {
            return Some(&**h);
        }
        match (method, self.get) {
            ("HEAD", Some(i)) => Some(&*self.methods[i].1),
            _ => None,
        }
    }

    /// The handler for `req`: by its method, or, on the one route that takes a
    /// WebSocket handshake, by the protocol an HTTP/2 extended CONNECT asks for. Only
    /// that route reads the protocol: the others answer a CONNECT by its method (no
    /// handler: a 405), as they did before routes took extended CONNECT.
    pub(crate) fn handler_for(&self, req: &kiln_http::Request<'_>) -> Option<&dyn ErasedHandler<S>> {
        if self.websocket {
            if let Some(protocol) = req.protocol() {
                return self.tunnel(protocol);
            }
        }
        self.handler(req.method())
    }

    /// The handler for an HTTP/2 extended CONNECT asking for `protocol` (RFC 8441):
    /// a `websocket` one is the WebSocket route's, as its HTTP/1.1 upgrade is, so that
    /// one route serves both.
    fn tunnel(&self, protocol: &str) -> Option<&dyn ErasedHandler<S>> {
        match self.get {
            Some(i) if self.websocket && protocol.eq_ignore_ascii_case("websocket") => Some(&*self.methods[i].1),
            _ => None,
        }
    }
}

/// The checked table: a `matchit` router over the endpoints, and the fallback.
pub(crate) struct Router<S> {
    router: matchit::Router<usize>,
    endpoints: Vec<Endpoint<S>>,
    pub(crate) fallback: Option<Arc<dyn ErasedHandler<S>>>,
    /// Whether any route streams its body: if none, nothing is looked up.
    streams: bool,
    /// Whether any route takes a WebSocket handshake.
    pub(crate) websockets: bool,
}

impl<S> Router<S> {
    /// Builds the table, refusing two routes that would answer the same requests and
    /// patterns the router cannot parse.
    pub(crate) fn build(
        routes: Vec<RouteEntry<S>>,
        fallback: Option<Arc<dyn ErasedHandler<S>>>,
    ) -> Result<Self, BuildError> {
        let mut endpoints: Vec<Endpoint<S>> = Vec::new();
        let mut owners: Vec<Vec<RouteEntry<S>>> = Vec::new();
        let mut by_pattern: HashMap<Cow<'static, str>, usize> = HashMap::new();
        let mut router = matchit::Router::new();
        for entry in routes {
            let index = match by_pattern.get(&entry.pattern) {
                Some(&i) => i,
                None => {
                    let i = endpoints.len();
                    if let Err(e) = router.insert(entry.pattern.to_string(), i) {
                        return Err(insert_error(e, &entry, &owners));
                    }
                    by_pattern.insert(entry.pattern.clone(), i);
                    endpoints.push(Endpoint {
                        pattern: entry.pattern.clone(),
                        methods: Vec::new(),
                        allow: String::new(),
                        get: None,
                        websocket: false,
                        streamed: Vec::new(),
                        rate_limited: false,
                    });
                    owners.push(Vec::new());
                    i
                }
            };
            if let Some(first) = owners[index].iter().find(|o| o.method == entry.method) {
                return Err(BuildError::Conflict { first: first.describe(), second: entry.describe() });
            }
            endpoints[index].methods.push((entry.method.clone(), Arc::clone(&entry.handler)));
            if entry.method == Method::GET && entry.websocket {
                endpoints[index].websocket = true;
            }
            if let Some(limit) = entry.stream_limit {
                endpoints[index].streamed.push((entry.method.clone(), limit));
            }
            owners[index].push(entry);
        }
        for endpoint in &mut endpoints {
            endpoint.get = endpoint.methods.iter().position(|(m, _)| *m == Method::GET);
            let mut allow: Vec<&str> = endpoint.methods.iter().map(|(m, _)| m.as_str()).collect();
            if endpoint.get.is_some() && !allow.contains(&"HEAD") {
                allow.push("HEAD");
            }
            endpoint.allow = allow.join(", ");
        }
        let streams = endpoints.iter().any(|e| !e.streamed.is_empty());
        let websockets = endpoints.iter().any(|e| e.websocket);
        Ok(Router { router, endpoints, fallback, streams, websockets })
    }

    /// Marks each endpoint that a rate limit may cover: `covers(pattern, method)` for
    /// any of its methods. The check per request stays exact; this only spares the
    /// endpoints it cannot apply to.
    pub(crate) fn mark_rate_limited(&mut self, covers: impl Fn(&str, &Method) -> bool) {
        for endpoint in &mut self.endpoints {
            endpoint.rate_limited = endpoint.methods.iter().any(|(method, _)| covers(&endpoint.pattern, method));
        }
    }

    /// The endpoint whose pattern matches `path`, with its index in
    /// [`patterns`](Self::patterns)' order (the route id metrics count by, assigned
    /// here at build time) and the captured parameters.
    pub(crate) fn at<'p>(&self, path: &'p str) -> Option<(usize, &Endpoint<S>, matchit::Params<'_, 'p>)> {
        let matched = self.router.at(path).ok()?;
        let index = *matched.value;
        Some((index, &self.endpoints[index], matched.params))
    }

    /// How the engine reads a request's body: streamed for a route registered with
    /// `App::stream_body`, else whole.
    pub(crate) fn body_mode(&self, path: &str, method: &str) -> kiln_http::BodyMode {
        if !self.streams {
            return kiln_http::BodyMode::Buffer;
        }
        let streamed = self.at(path).and_then(|(_, e, _)| e.streamed.iter().find(|(m, _)| m.as_str() == method));
        match streamed {
            Some(&(_, max_bytes)) => kiln_http::BodyMode::Stream { max_bytes },
            None => kiln_http::BodyMode::Buffer,
        }
    }

    /// Whether some pattern matches `path`.
    pub(crate) fn matches(&self, path: &str) -> bool {
        self.router.at(path).is_ok()
    }

    /// The patterns, in registration order.
    /// The index of the endpoint `path` matches, in [`patterns`](Self::patterns)' order.
    pub(crate) fn index_of(&self, path: &str) -> Option<usize> {
        self.router.at(path).ok().map(|matched| *matched.value)
    }

    pub(crate) fn patterns(&self) -> impl Iterator<Item = &str> {
        self.endpoints.iter().map(|e| &*e.pattern)
    }
}

fn insert_error<S>(e: matchit::InsertError, entry: &RouteEntry<S>, owners: &[Vec<RouteEntry<S>>]) -> BuildError {
    match e {
        matchit::InsertError::Conflict { with } => {
            let first = owners
                .iter()
                .flatten()
                .find(|o| o.pattern == with)
                .map_or_else(|| format!("`{with}`"), RouteEntry::describe);
            BuildError::Conflict { first, second: entry.describe() }
        }
        other => BuildError::InvalidPattern { route: entry.describe(), reason: other.to_string() },
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
    /// An app setting that cannot be used, such as a public URL that is not one.
    Setting {
        /// The [`App`](crate::App) method that was given it.
        setting: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Conflict { first, second } => write!(f, "route {second} conflicts with route {first}"),
            BuildError::InvalidPattern { route, reason } => write!(f, "route {route} has an invalid pattern: {reason}"),
            BuildError::Setting { setting, reason } => write!(f, "App::{setting}: {reason}"),
        }
    }
}

impl std::error::Error for BuildError {}
