//! The typed settings of a CORS policy.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

/// Which origins may read the app's responses.
#[derive(Clone)]
pub(super) enum Origins {
    List(Vec<String>),
    Predicate(fn(&str) -> bool),
    Any,
}

/// A CORS policy for the paths under a prefix; give it with
/// [`App::cors`](crate::App::cors).
///
/// Preflights (`OPTIONS` with `Access-Control-Request-Method`) are answered `204`
/// before routing, so a path that has no `OPTIONS` route does not answer them `405`;
/// a refused one gets `403` with the reason, also logged (`tracing`, target
/// `kiln::cors`), rather than a header silently missing. Responses to allowed origins
/// carry `Access-Control-Allow-Origin` (and the exposed headers); every response in
/// scope says `Vary: Origin`.
///
/// ```
/// use std::time::Duration;
/// use kiln::{App, Cors, Route};
///
/// #[derive(Route)]
/// #[route(PUT, "/api/items/{id}")]
/// struct PutItem { id: u32 }
///
/// async fn put(route: PutItem) -> String { format!("stored {}", route.id) }
///
/// let cors = Cors::new()
///     .allow_origins(["https://app.example"])
///     .allow_methods(["PUT", "DELETE"])
///     .allow_headers(["content-type", "authorization"])
///     .allow_credentials()
///     .max_age(Duration::from_secs(600))
///     .path_prefix("/api/");
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(put).cors(cors));
/// let res = client
///     .request("OPTIONS", "/api/items/1")
///     .header("Origin", "https://app.example")
///     .header("Access-Control-Request-Method", "PUT")
///     .header("Access-Control-Request-Headers", "content-type")
///     .send();
/// assert_eq!(res.status(), 204);
/// assert_eq!(res.header("access-control-allow-origin"), Some("https://app.example"));
/// assert_eq!(res.header("access-control-allow-methods"), Some("PUT, DELETE"));
/// ```
#[derive(Clone)]
pub struct Cors {
    pub(super) prefix: Cow<'static, str>,
    pub(super) origins: Origins,
    /// `Access-Control-Allow-Methods`, as sent.
    pub(super) methods: String,
    /// `Access-Control-Allow-Headers`, as sent (lower-case).
    pub(super) headers: String,
    pub(super) any_header: bool,
    pub(super) credentials: bool,
    pub(super) max_age: Option<Duration>,
    /// `Access-Control-Expose-Headers`, as sent.
    pub(super) expose: String,
}

impl Default for Cors {
    fn default() -> Self {
        Cors::new()
    }
}

impl Cors {
    /// A policy that allows no origin yet, on every path, for the safelisted methods
    /// (GET, HEAD, POST) and headers.
    pub fn new() -> Self {
        Cors {
            prefix: Cow::Borrowed("/"),
            origins: Origins::List(Vec::new()),
            methods: "GET, HEAD, POST".to_owned(),
            headers: String::new(),
            any_header: false,
            credentials: false,
            max_age: None,
            expose: String::new(),
        }
    }

    /// Allows these exact origins (`https://app.example`, scheme and host and any port).
    pub fn allow_origins<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        let mut list = match self.origins {
            Origins::List(list) => list,
            _ => Vec::new(),
        };
        list.extend(origins.into_iter().map(Into::into));
        self.origins = Origins::List(list);
        self
    }

    /// Allows the origins `allow` says yes to (`|o| o.ends_with(".example.org")`).
    pub fn allow_origin_fn(mut self, allow: fn(&str) -> bool) -> Self {
        self.origins = Origins::Predicate(allow);
        self
    }

    /// Allows every origin: for public, read-only data.
    pub fn allow_any_origin(mut self) -> Self {
        self.origins = Origins::Any;
        self
    }

    /// The methods allowed (beyond GET, HEAD and POST, always allowed).
    pub fn allow_methods<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, methods: I) -> Self {
        self.methods = join(methods, false);
        self
    }

    /// The request headers allowed (beyond the CORS-safelisted ones).
    pub fn allow_headers<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, headers: I) -> Self {
        self.headers = join(headers, true);
        self
    }

    /// Allows any request header a preflight asks for.
    pub fn allow_any_header(mut self) -> Self {
        self.any_header = true;
        self
    }

    /// Lets the browser send cookies and `Authorization` and expose the response
    /// (`Access-Control-Allow-Credentials: true`); the allowed origin is then named,
    /// never `*`.
    pub fn allow_credentials(mut self) -> Self {
        self.credentials = true;
        self
    }

    /// How long a browser may cache a preflight's answer.
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = Some(max_age);
        self
    }

    /// Response headers a script on the other origin may read.
    pub fn expose_headers<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, headers: I) -> Self {
        self.expose = join(headers, false);
        self
    }

    /// Applies the policy to the paths that start with `prefix` only (`/api/`).
    pub fn path_prefix(mut self, prefix: impl Into<Cow<'static, str>>) -> Self {
        self.prefix = prefix.into();
        self
    }
}

fn join<I: IntoIterator<Item = S>, S: AsRef<str>>(items: I, lower: bool) -> String {
    let items: Vec<String> = items
        .into_iter()
        .map(|s| if lower { s.as_ref().to_ascii_lowercase() } else { s.as_ref().to_owned() })
        .collect();
    items.join(", ")
}

impl fmt::Debug for Cors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let origins = match &self.origins {
            Origins::List(list) => format!("{list:?}"),
            Origins::Predicate(_) => "fn(&str) -> bool".to_owned(),
            Origins::Any => "*".to_owned(),
        };
        f.debug_struct("Cors")
            .field("prefix", &self.prefix)
            .field("origins", &origins)
            .field("methods", &self.methods)
            .field("headers", &self.headers)
            .field("credentials", &self.credentials)
            .field("max_age", &self.max_age)
            .finish_non_exhaustive()
    }
}
