//! Typed routes: a route is a type, its value is a link.

use std::borrow::Cow;
use std::fmt::{self, Write};
use std::str::FromStr;

use kiln_http::Method;

use crate::rejection::{InvalidPathParam, InvalidQuery, Rejection};

/// A typed route, usually derived with [`#[derive(Route)]`](macro@crate::Route).
///
/// The same value matches requests (`from_parts`) and renders its own link
/// (`Display`, percent-encoded path and query), so a link to a route that does not
/// exist, or with a parameter of the wrong type, does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a typed route",
    label = "a route handler's first argument must be its typed route",
    note = "derive it: `#[derive(Route)] #[route(\"/path/{{param}}\")] struct {Self} {{ .. }}`; write `_: MyRoute` when its fields are not needed"
)]
pub trait Route: fmt::Display + Sized + 'static {
    /// The `matchit` pattern, such as `/writings/{page}` or `/files/{*rest}`.
    const PATTERN: &'static str;
    /// The method the route answers (`HEAD` is answered from `GET`).
    const METHOD: Method;

    /// Builds the route from the matched path parameters and the query string.
    fn from_parts(params: &PathParams<'_, '_>, query: Option<&str>) -> Result<Self, Rejection>;

    /// The route type's doc comment, which `#[derive(Route)]` captures for the API
    /// document (`kiln::openapi`): its first paragraph is the operation's summary.
    #[doc(hidden)]
    const DOC: &'static str = "";

    /// The route's path and query parameters, for the API document; called only when
    /// the document is built, never per request.
    #[doc(hidden)]
    fn parameters() -> Vec<__private::RouteParam> {
        Vec::new()
    }
}

/// The parameters captured by the matched pattern, still percent-encoded.
#[derive(Debug, Default, Clone)]
pub struct PathParams<'k, 'v> {
    inner: matchit::Params<'k, 'v>,
}

impl<'k, 'v> PathParams<'k, 'v> {
    pub(crate) fn new(inner: matchit::Params<'k, 'v>) -> Self {
        PathParams { inner }
    }

    /// The raw (percent-encoded) value captured as `name`.
    pub fn get(&self, name: &str) -> Option<&'v str> {
        self.inner.get(name)
    }

    /// Every capture, as (name, raw value).
    pub fn iter(&self) -> impl Iterator<Item = (&'k str, &'v str)> + '_ {
        self.inner.iter()
    }
}

/// Decodes `%XX` escapes (and `+` as a space when `plus` is set). Borrows when there
/// is nothing to decode; `None` for a bad escape or bytes that are not UTF-8.
pub(crate) fn percent_decode(raw: &str, plus: bool) -> Option<Cow<'_, str>> {
    if !raw.bytes().any(|b| b == b'%' || (plus && b == b'+')) {
        return Some(Cow::Borrowed(raw));
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hi = (hex[0] as char).to_digit(16)?;
                let lo = (hex[1] as char).to_digit(16)?;
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// Which bytes pass through a link unescaped.
#[derive(Clone, Copy)]
enum Part {
    /// One path segment: unreserved and sub-delimiters, `:` and `@` (RFC 3986 §3.3).
    Segment,
    /// The rest of a path: like a segment, and `/` too.
    Rest,
    /// A query key or value: unreserved only, so `&`, `=`, `+` and `#` are escaped.
    Query,
}

fn passes(b: u8, part: Part) -> bool {
    let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
    match part {
        Part::Query => unreserved,
        Part::Segment => {
            unreserved || matches!(b, b'!' | b'$' | b'\'' | b'(' | b')' | b'*' | b',' | b';' | b':' | b'@')
        }
        Part::Rest => {
            unreserved || matches!(b, b'!' | b'$' | b'\'' | b'(' | b')' | b'*' | b',' | b';' | b':' | b'@' | b'/')
        }
    }
}

/// A `fmt::Write` that percent-encodes what passes through it, so a value's
/// `Display` goes into a link without an intermediate string.
struct Encoder<'a, 'b> {
    out: &'a mut fmt::Formatter<'b>,
    part: Part,
}

impl Write for Encoder<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        // Runs of passing bytes are ASCII, so each is valid UTF-8 even when it starts
        // right after an escaped byte in the middle of a character.
        let bytes = s.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if !passes(b, self.part) {
                self.out.write_str(std::str::from_utf8(&bytes[start..i]).map_err(|_| fmt::Error)?)?;
                let escaped = [b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]];
                self.out.write_str(std::str::from_utf8(&escaped).map_err(|_| fmt::Error)?)?;
                start = i + 1;
            }
        }
        self.out.write_str(std::str::from_utf8(&bytes[start..]).map_err(|_| fmt::Error)?)
    }
}

fn write_encoded(f: &mut fmt::Formatter<'_>, value: &dyn fmt::Display, part: Part) -> fmt::Result {
    write!(Encoder { out: f, part }, "{value}")
}

/// Support for the code `#[derive(Route)]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    use super::*;

    /// Parses the capture `name` with `FromStr`; a capture that does not parse means
    /// the path names no resource, hence 404.
    pub fn parse_capture<T: FromStr>(params: &PathParams<'_, '_>, name: &'static str) -> Result<T, Rejection> {
        let raw = params.get(name).ok_or(InvalidPathParam::missing(name))?;
        let decoded = percent_decode(raw, false).ok_or_else(|| InvalidPathParam::bad_escape(name))?;
        decoded.parse().map_err(|_| InvalidPathParam::unparsable(name, std::any::type_name::<T>()).into())
    }

    /// Parses the query parameter `name` with `FromStr`.
    pub fn parse_query<T: FromStr>(name: &'static str, value: &str) -> Result<T, Rejection> {
        value.parse().map_err(|_| InvalidQuery::unparsable(name, std::any::type_name::<T>()).into())
    }

    /// The rejection for a required query parameter that is absent.
    pub fn missing_query(name: &'static str) -> Rejection {
        InvalidQuery::missing(name).into()
    }

    /// The rejection for a query parameter given more than once.
    pub fn repeated_query(name: &'static str) -> Rejection {
        InvalidQuery::repeated(name).into()
    }

    /// The decoded `key=value` pairs of a query string; bad escapes are skipped.
    pub fn query_pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
        query.split('&').filter(|p| !p.is_empty()).filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((percent_decode(k, true)?, percent_decode(v, true)?))
        })
    }

    /// Writes one captured segment, percent-encoded (a `/` in the value is escaped).
    pub fn write_segment(f: &mut fmt::Formatter<'_>, value: &dyn fmt::Display) -> fmt::Result {
        write_encoded(f, value, Part::Segment)
    }

    /// Writes a wildcard capture, percent-encoded but keeping its slashes.
    pub fn write_rest(f: &mut fmt::Formatter<'_>, value: &dyn fmt::Display) -> fmt::Result {
        write_encoded(f, value, Part::Rest)
    }

    /// One of a route's parameters, as `#[derive(Route)]` describes it for the API
    /// document.
    pub struct RouteParam {
        /// The capture's or query key's name.
        pub name: &'static str,
        /// The field's doc comment.
        pub doc: &'static str,
        /// Captured from the path (`true`) or read from the query.
        pub in_path: bool,
        /// Whether a request must carry it.
        pub required: bool,
        /// Its type.
        pub ty: ParamType,
    }

    /// A parameter's type: its name, and its schema when it has one (feature `openapi`).
    pub struct ParamType {
        /// The type's name (`u32`, `alloc::string::String`), which the document infers
        /// a schema from when the type has none of its own.
        pub name: fn() -> &'static str,
        /// The type's own schema, when it implements `schemars::JsonSchema`.
        #[cfg(feature = "openapi")]
        pub schema: Option<fn(&mut schemars::SchemaGenerator) -> schemars::Schema>,
    }

    /// Stands for a parameter's type `T` in the derive's autoref specialisation:
    /// `(&Probe::<T>::new()).param_type()` takes [`ProbeSchema`] when `T` has a schema
    /// (only with feature `openapi`) and [`ProbeName`] otherwise. The derive writes
    /// the call with `T` concrete, where the choice can be made; the code compiles the
    /// same with or without the feature.
    pub struct Probe<T: ?Sized>(std::marker::PhantomData<fn() -> Box<T>>);

    impl<T: ?Sized> Probe<T> {
        /// The probe for `T`.
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            Probe(std::marker::PhantomData)
        }
    }

    /// A parameter type with a schema of its own (feature `openapi`).
    pub trait ProbeSchema {
        /// The parameter's type.
        fn param_type(&self) -> ParamType;
    }

    /// Any parameter type, described by its name.
    pub trait ProbeName {
        /// The parameter's type.
        fn param_type(&self) -> ParamType;
    }

    impl<T: ?Sized> ProbeName for &Probe<T> {
        fn param_type(&self) -> ParamType {
            ParamType {
                name: std::any::type_name::<T>,
                #[cfg(feature = "openapi")]
                schema: None,
            }
        }
    }

    /// Writes `?key=value` (or `&key=value` after the first), percent-encoded.
    pub fn write_query(
        f: &mut fmt::Formatter<'_>,
        first: &mut bool,
        key: &str,
        value: &dyn fmt::Display,
    ) -> fmt::Result {
        f.write_str(if *first { "?" } else { "&" })?;
        *first = false;
        write_encoded(f, &key, Part::Query)?;
        f.write_str("=")?;
        write_encoded(f, value, Part::Query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_plus() {
        assert_eq!(percent_decode("a%20b", false).unwrap(), "a b");
        assert_eq!(percent_decode("a+b", true).unwrap(), "a b");
        assert_eq!(percent_decode("a+b", false).unwrap(), "a+b");
        assert_eq!(percent_decode("%C3%A9", false).unwrap(), "é");
        assert!(percent_decode("%zz", false).is_none());
        assert!(percent_decode("%4", false).is_none());
        assert!(percent_decode("%FF", false).is_none());
        assert!(matches!(percent_decode("plain", true).unwrap(), Cow::Borrowed(_)));
    }

    struct Link<'a>(&'a str, Part);
    impl fmt::Display for Link<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_encoded(f, &self.0, self.1)
        }
    }

    #[test]
    fn encodes_per_part() {
        assert_eq!(Link("a b/c?d", Part::Segment).to_string(), "a%20b%2Fc%3Fd");
        assert_eq!(Link("a b/c", Part::Rest).to_string(), "a%20b/c");
        assert_eq!(Link("x=1&y+z#", Part::Query).to_string(), "x%3D1%26y%2Bz%23");
        assert_eq!(Link("é", Part::Segment).to_string(), "%C3%A9");
    }
}
