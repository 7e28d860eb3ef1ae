//! The two splices that are not text: markup taken as it is, and room reserved.

use crate::render::Render;

/// Markup written into the page as it is, unescaped and unchecked: the one way to put
/// raw HTML in a page, and easy to find with `grep PreEscaped`.
///
/// ```
/// use kiln_html::{html, PreEscaped};
///
/// let svg = "<svg width=\"8\" height=\"8\"></svg>";
/// assert_eq!(html! { span { (PreEscaped(svg)) } }.as_str(), "<span><svg width=\"8\" height=\"8\"></svg></span>");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PreEscaped<T: AsRef<str>>(pub T);

impl<T: AsRef<str>> Render for PreEscaped<T> {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        buf.push_str(self.0.as_ref());
    }
}

/// A splice that renders nothing and grows the output by `n` bytes first, allowed in
/// every element.
///
/// The output string grows by doubling, copying what was written at each step; a
/// large page whose size is known up front (a table of `rows × cols`) renders faster
/// when the string is grown once.
///
/// ```
/// use kiln_html::{html, Reserve};
///
/// let page = html! { ul { (Reserve(4096)) li { "one" } } };
/// assert!(page.into_string().capacity() >= 4096);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reserve(pub usize);

impl Render for Reserve {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        buf.reserve(self.0);
    }
}
