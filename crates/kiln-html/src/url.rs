//! Values for `href`, `src`, `action` and `formaction`: never a bare string.

use std::fmt;

use crate::render::{Escaper, escape};

/// A value that `href`, `src`, `action` and `formaction` accept: an [`Asset`] of
/// this site, an [`ExternalUrl`], or (through kiln) a typed route.
///
/// A string is deliberately not one: a link written as a string is the link that
/// breaks when a route moves.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a link: `href`, `src`, `action` and `formaction` take a typed route, an `Asset` or an `ExternalUrl`",
    label = "not a link",
    note = "wrap a URL of another site in `ExternalUrl(..)`, a file of this site in `Asset::new(..)`"
)]
pub trait Href {
    /// Appends the URL, escaped for a quoted attribute value.
    fn write_href(&self, buf: &mut String);
}

impl<T: Href + ?Sized> Href for &T {
    #[inline]
    fn write_href(&self, buf: &mut String) {
        (**self).write_href(buf);
    }
}

/// A URL outside this site, spelled out on purpose: `ExternalUrl("https://example.org/")`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ExternalUrl<T: AsRef<str>>(pub T);

impl<T: AsRef<str>> Href for ExternalUrl<T> {
    fn write_href(&self, buf: &mut String) {
        escape(self.0.as_ref(), buf);
    }
}

/// A file this site serves, by its absolute path: `Asset::new("/static/site.css")`.
///
/// `new` is a `const fn` that refuses a path not starting with `/`, so a constant
/// asset with a relative path does not compile.
///
/// ```
/// use kiln_html::{html, Asset};
///
/// const CSS: Asset = Asset::new("/static/site.css");
/// let head = html! { link rel="stylesheet" href=(CSS); };
/// assert_eq!(head.as_str(), r#"<link rel="stylesheet" href="/static/site.css">"#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Asset(&'static str);

impl Asset {
    /// The asset at `path`, which starts with `/`.
    ///
    /// # Panics
    /// When `path` does not start with `/` (at compile time for a constant).
    pub const fn new(path: &'static str) -> Asset {
        assert!(!path.is_empty() && path.as_bytes()[0] == b'/', "an asset path starts with `/`");
        Asset(path)
    }

    /// The asset's path.
    pub const fn path(&self) -> &'static str {
        self.0
    }
}

impl Href for Asset {
    fn write_href(&self, buf: &mut String) {
        escape(self.0, buf);
    }
}

/// Writes a `Display` link (such as a typed route) escaped into a quoted attribute value.
pub fn write_display_href(link: &dyn fmt::Display, buf: &mut String) {
    let _ = fmt::write(&mut Escaper(buf), format_args!("{link}"));
}
