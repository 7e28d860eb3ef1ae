//! Named parts of the request deserialised into a type, so that the type says which
//! ones a handler reads: [`HeaderFields<T>`] from the headers, [`CookieFields<T>`]
//! from the cookies. The API document (feature `openapi`) lists each field of `T` as a
//! header or cookie parameter, where [`Headers`](crate::Headers) and
//! [`Cookies`](crate::Cookies), read by name at run time, tell it nothing.

use serde::de::DeserializeOwned;

use crate::cookie::Cookies;
use crate::extract::{FromRequest, RequestContext};
use crate::rejection::{MissingHeader, Rejection};

/// The request's headers deserialised into `T` (with serde), each field a header by
/// its lowercase name: `#[serde(rename = "x-api-key")]`, or
/// `#[serde(rename_all = "kebab-case")]` on `T`. A field that is not an `Option` is
/// required; one missing or that does not parse is refused with `400`.
///
/// ```
/// use kiln::{App, HeaderFields, Route};
/// use serde::Deserialize;
///
/// #[derive(Route)]
/// #[route("/whoami")]
/// struct WhoAmI;
///
/// #[derive(Deserialize)]
/// #[serde(rename_all = "kebab-case")]
/// struct Client { user_agent: String, x_request_id: Option<u64> }
///
/// async fn whoami(_: WhoAmI, HeaderFields(client): HeaderFields<Client>) -> String {
///     format!("{} {:?}", client.user_agent, client.x_request_id)
/// }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(whoami));
/// let res = client.request("GET", &WhoAmI).header("User-Agent", "curl").header("X-Request-Id", "7").send();
/// assert_eq!(res.text(), "curl Some(7)");
/// assert_eq!(client.request("GET", &WhoAmI).header("x-request-id", "7").send().status(), 400);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeaderFields<T>(pub T);

/// The request's cookies deserialised into `T` (with serde), each field a cookie by
/// its name. A field that is not an `Option` is required; one missing or that does not
/// parse is refused with `400`. The values are as the client sent them: for a signed
/// cookie, read [`SignedCookies`](crate::SignedCookies).
///
/// ```
/// use kiln::{App, CookieFields, Route};
/// use serde::Deserialize;
///
/// #[derive(Route)]
/// #[route("/prefs")]
/// struct Prefs;
///
/// #[derive(Deserialize)]
/// struct Settings { theme: String, font_size: Option<u8> }
///
/// async fn prefs(_: Prefs, CookieFields(s): CookieFields<Settings>) -> String {
///     format!("{} {:?}", s.theme, s.font_size)
/// }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(prefs));
/// let res = client.request("GET", &Prefs).header("Cookie", "theme=dark; font_size=14").send();
/// assert_eq!(res.text(), "dark Some(14)");
/// assert_eq!(client.get(&Prefs).status(), 400);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CookieFields<T>(pub T);

impl<S, T: DeserializeOwned> FromRequest<S> for HeaderFields<T> {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let headers = cx.request().headers().filter_map(|(name, value)| {
            let value = std::str::from_utf8(value).ok()?;
            Some((name.to_ascii_lowercase(), value))
        });
        let pairs: Vec<(String, &str)> = headers.collect();
        let pairs = pairs.iter().map(|(name, value)| (name.as_str(), *value));
        from_pairs(pairs).map(HeaderFields).map_err(|e| MissingHeader::new(format!("invalid headers: {e}")).into())
    }
}

impl<S, T: DeserializeOwned> FromRequest<S> for CookieFields<T> {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let cookies = Cookies::from_request(cx)?;
        from_pairs(cookies.iter())
            .map(CookieFields)
            .map_err(|e| MissingHeader::new(format!("invalid cookies: {e}")).into())
    }
}

/// `T` from name and value pairs, each value parsed as its field's type the way a
/// query's is (serde_urlencoded, which parses numbers and booleans from text).
pub(crate) fn from_pairs<'p, T: DeserializeOwned>(
    pairs: impl Iterator<Item = (&'p str, &'p str)>,
) -> Result<T, serde_urlencoded::de::Error> {
    let pairs: Vec<(&str, &str)> = pairs.collect();
    let encoded = serde_urlencoded::to_string(&pairs).map_err(|e| serde::de::Error::custom(e.to_string()))?;
    serde_urlencoded::from_str(&encoded)
}
