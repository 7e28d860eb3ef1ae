//! Rendered markup that carries its content category in its type.

use std::fmt;
use std::marker::PhantomData;

use crate::render::Render;

/// A content category: what a [`Fragment`] holds at its top level, and so where it
/// may be spliced.
pub trait Category: sealed::Sealed {
    /// The category's name in messages.
    const NAME: &'static str;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! categories {
    ($($(#[$doc:meta])* $name:ident,)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Category for $name {
            const NAME: &'static str = stringify!($name);
        }
    )*};
}

categories! {
    /// Phrasing content with no interactive content in it: text, `span`, `em`, `code`,
    /// `img` … Goes anywhere text goes, `<a>` and `<button>` included.
    Phrasing,
    /// Phrasing content with interactive content in it (`a`, `button`, `input`, `label`,
    /// `select`, `textarea`): goes where phrasing goes, but not into `<a>` or `<button>`.
    Interactive,
    /// Flow content: anything that goes in `<body>`, `<div>` or `<li>`.
    Flow,
    /// `<li>` elements: for `<ul>`, `<ol>` and `<menu>`.
    ListItem,
    /// `<tr>` elements: for `<table>`, `<thead>`, `<tbody>` and `<tfoot>`.
    TableRow,
    /// `<td>` and `<th>` elements: for `<tr>`.
    TableCell,
    /// `<option>` and `<optgroup>` elements: for `<select>` (and, `<option>` alone, `<datalist>`).
    SelectOption,
    /// Metadata for `<head>` other than `<title>` and `<base>`: `<meta>`, `<link>`,
    /// `<style>`, `<script>`.
    Metadata,
    /// A whole document: `<!DOCTYPE html>` and its `<html>` element.
    Document,
}

/// Markup rendered by [`html!`](crate::html!), whose top-level content is of
/// category `C`.
///
/// Splicing it into another `html!` checks `C` against what the parent element
/// accepts, so a component keeps the check across a function boundary:
///
/// ```
/// use kiln_html::{html, Flow, Fragment, Interactive};
///
/// fn link_home() -> Fragment<Interactive> {
///     html! { a href="#top" { "home" } }
/// }
///
/// fn footer() -> Fragment<Flow> {
///     html! { footer { p { "Back " (link_home()) } } }
/// }
///
/// assert_eq!(footer().as_str(), "<footer><p>Back <a href=\"#top\">home</a></p></footer>");
/// ```
///
/// A narrower fragment converts into a wider one: `Fragment<Phrasing>` into
/// `Fragment<Interactive>` or `Fragment<Flow>`, `Fragment<Interactive>` into
/// `Fragment<Flow>` (with `.into()`).
pub struct Fragment<C> {
    html: String,
    category: PhantomData<C>,
}

impl<C> Fragment<C> {
    /// Wraps markup that the `html!` macro checked to be of category `C`.
    #[doc(hidden)]
    pub fn __checked(html: String) -> Self {
        Fragment { html, category: PhantomData }
    }

    /// The rendered HTML.
    pub fn as_str(&self) -> &str {
        &self.html
    }

    /// The rendered HTML, as the string it was rendered into.
    pub fn into_string(self) -> String {
        self.html
    }
}

impl<C> Render for Fragment<C> {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        buf.push_str(&self.html);
    }
}

impl<C> Clone for Fragment<C> {
    fn clone(&self) -> Self {
        Fragment::__checked(self.html.clone())
    }
}

impl<C> PartialEq for Fragment<C> {
    fn eq(&self, other: &Self) -> bool {
        self.html == other.html
    }
}

impl<C> Eq for Fragment<C> {}

impl<C: Category> fmt::Debug for Fragment<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fragment<{}>({:?})", C::NAME, self.html)
    }
}

impl<C> fmt::Display for Fragment<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.html)
    }
}

macro_rules! widen {
    ($($from:ident => $to:ident,)*) => {$(
        impl From<Fragment<$from>> for Fragment<$to> {
            fn from(fragment: Fragment<$from>) -> Self {
                Fragment::__checked(fragment.html)
            }
        }
    )*};
}

widen! {
    Phrasing => Interactive,
    Phrasing => Flow,
    Interactive => Flow,
}
