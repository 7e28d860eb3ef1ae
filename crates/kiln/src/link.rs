//! Absolute links: the site's public URL, configured once with
//! [`App::public_url`](crate::App::public_url), joined to a typed route's link.

use std::fmt;
use std::sync::Arc;

use crate::extract::{FromRequest, RequestContext};
use crate::rejection::{Internal, Rejection};

/// The site's public address, as given to [`App::public_url`](crate::App::public_url);
/// as a handler argument, it renders absolute links for a feed or a sitemap.
///
/// It never comes from the request's `Host` header, which the client chooses.
///
/// ```
/// use kiln::{App, PublicUrl, Route};
///
/// #[derive(Route)]
/// #[route("/pages/{slug}")]
/// struct Page { slug: String }
///
/// #[derive(Route)]
/// #[route("/feed.rss")]
/// struct Feed;
///
/// async fn feed(_: Feed, url: PublicUrl) -> String {
///     url.link(&Page { slug: "x".into() }).to_string()
/// }
///
/// let app = App::new(|_| ()).public_url("https://example.org/").route(feed);
/// let mut client = kiln::test::TestClient::new(app);
/// assert_eq!(client.get(&Feed).text(), "https://example.org/pages/x");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl {
    /// Scheme, host and optional path prefix, without a trailing slash.
    base: Arc<str>,
}

impl PublicUrl {
    /// The base of a public URL, once checked that `url` is `http(s)://host[:port][/path]`, with no query, fragment,
    /// user or whitespace.
    pub(crate) fn parse(url: &str) -> Result<Arc<str>, String> {
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .ok_or_else(|| format!("`{url}` does not start with `https://` or `http://`"))?;
        let host = rest.split('/').next().unwrap_or("");
        if host.is_empty() {
            return Err(format!("`{url}` names no host"));
        }
        if let Some(c) = url.chars().find(|c| matches!(c, '?' | '#' | '@') || c.is_whitespace() || c.is_control()) {
            return Err(format!("`{url}` holds `{}`; give only scheme, host and path", c.escape_default()));
        }
        Ok(Arc::from(url.trim_end_matches('/')))
    }

    /// The URL, without a trailing slash: `https://example.org`.
    pub fn as_str(&self) -> &str {
        &self.base
    }

    /// The absolute form of `link`, usually a typed route's value (which renders as
    /// a path starting with `/`): `https://example.org/pages/x`.
    pub fn link<L: fmt::Display>(&self, link: L) -> Absolute<'_, L> {
        Absolute { base: &self.base, link }
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

/// An absolute link, rendered without an intermediate string; see [`PublicUrl::link`].
#[derive(Debug, Clone, Copy)]
pub struct Absolute<'a, L> {
    base: &'a str,
    link: L,
}

impl<L: fmt::Display> fmt::Display for Absolute<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.base, self.link)
    }
}

/// Refused with 500 when the app has no public URL: the app is wired wrongly.
impl<S> FromRequest<S> for PublicUrl {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let base = cx.config().public_url.clone().ok_or_else(|| {
            Rejection::from(Internal::new(
                "a handler asks for `PublicUrl` but the app has none: call `App::public_url`",
            ))
        })?;
        Ok(PublicUrl { base })
    }
}

#[cfg(test)]
mod tests {
    use super::PublicUrl;

    #[test]
    fn public_urls_are_checked() {
        let table = [
            ("https://example.org", Ok("https://example.org")),
            ("https://example.org/", Ok("https://example.org")),
            ("http://127.0.0.1:8080/wiki/", Ok("http://127.0.0.1:8080/wiki")),
            ("example.org", Err(())),
            ("https://", Err(())),
            ("https:///x", Err(())),
            ("https://example.org/?q=1", Err(())),
            ("https://user@example.org", Err(())),
            ("https://exa mple.org", Err(())),
        ];
        for (url, expected) in table {
            let got = PublicUrl::parse(url).map(|u| u.to_string()).map_err(drop);
            assert_eq!(got, expected.map(str::to_owned), "{url}");
        }
    }
}
