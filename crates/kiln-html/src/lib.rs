//! kiln-html: HTML written in a maud-like macro, checked against the HTML Living
//! Standard's content models at compile time, rendered straight into one string.
//!
//! - **Nesting**: flow vs phrasing content, `<li>` only in lists, `<tr>` only in table
//!   parts, `<td>`/`<th>` only in `<tr>`, `<option>` only in `<select>`/`<datalist>`,
//!   no interactive content in `<a>` or `<button>`, no `<p>` in `<p>`, `<head>` then
//!   `<body>`, `<title>` exactly once; errors name the element, the child and what the
//!   parent accepts, at the child's span.
//! - **Attributes**: each element takes the global attributes and its own; keywords
//!   (`type` of `<input>`, `method` of `<form>` …) and booleans are typed; required ones
//!   (`alt` and `src` of `<img>`, `lang` of `<html>`) must be there; void elements take
//!   no children.
//! - **Links**: `href`, `src`, `action` take a typed route (through kiln), an [`Asset`]
//!   or an [`ExternalUrl`], never a string by accident.
//! - **Escaping**: text and attribute values are escaped; raw HTML only through
//!   [`PreEscaped`].
//! - **Components**: a [`Fragment<C>`](Fragment) carries its content category `C`
//!   ([`Flow`], [`Phrasing`], [`ListItem`] …), so it is checked where it is spliced.
//! - **Speed**: the static markup is merged into string literals at compile time and
//!   everything is written into one `String`: no tree, no boxing.
//!
//! ```
//! use kiln_html::{html, Fragment, ListItem};
//!
//! fn item(name: &str) -> Fragment<ListItem> {
//!     html! { li.item { (name) } }
//! }
//!
//! let page = html! {
//!     ul { (item("<one>")) @for n in ["two", "three"] { (item(n)) } }
//! };
//! assert_eq!(
//!     page.as_str(),
//!     r#"<ul><li class="item">&lt;one&gt;</li><li class="item">two</li><li class="item">three</li></ul>"#
//! );
//! ```
//!
//! Wrong markup does not compile:
//!
//! ```compile_fail
//! use kiln_html::html;
//! // error: `<li>` is not allowed in `<p>` …
//! let page = html! { p { li { "item" } } };
//! ```

mod attr;
pub mod el;
mod fragment;
mod live;
mod raw;
mod render;
mod slot;
mod url;

#[doc(hidden)]
#[path = "rt.rs"]
pub mod __rt;

pub use attr::{
    AttrValue, AutocompleteForm, ButtonType, CrossOrigin, Decoding, Dir, FormEnctype, FormMethod, InputType, Keyword,
    ListStyle, Loading, Number, Scope, TrueFalse, Wrap, YesNo,
};
pub use fragment::{
    Category, Document, Flow, Fragment, Interactive, ListItem, Metadata, Phrasing, SelectOption, TableCell, TableRow,
};
pub use live::{Item, List, Live, Part, Slot, Statics};
pub use raw::{PreEscaped, Reserve};
pub use render::{Render, escape};
pub use slot::{InFlow, InHead, InInert, InList, InPhrasing, InRawText, InSelect, InTableRow, InTableRows, InText};
pub use url::{Asset, ExternalUrl, Href, write_display_href};

/// Markup in maud's syntax, checked against HTML's content models, rendered into a
/// [`Fragment`] whose category is that of its top-level content.
///
/// ```
/// use kiln_html::{html, ExternalUrl};
///
/// let user = "<admin>";
/// let page = html! {
///     div #main .card[true] {
///         h1 { "Hello, " (user) }
///         a href=(ExternalUrl("https://example.org/?a=1&b=2")) { "elsewhere" }
///         input type="checkbox" name="agree" checked[user.is_empty()];
///     }
/// };
/// assert_eq!(
///     page.as_str(),
///     "<div id=\"main\" class=\"card\"><h1>Hello, &lt;admin&gt;</h1>\
///      <a href=\"https://example.org/?a=1&amp;b=2\">elsewhere</a>\
///      <input type=\"checkbox\" name=\"agree\"></div>"
/// );
/// ```
///
/// The syntax: `name attrs { children }` for an element, `name attrs;` for a void one;
/// `.class`, `.class[cond]`, `#id`, `attr="text"`, `attr=(expr)`, `attr=[option]`, a
/// boolean `attr` or `attr[cond]`; `"text"`; `(expr)` splices a value; `@if`,
/// `@if let`, `@else`, `@for pat in expr`, `@match expr { pat => { .. } }`, `@let pat = expr;`.
/// `@for pat in expr; key = expr` keys the items of a [`live_html!`] list; `html!`
/// ignores the key, so that one template serves both.
///
/// The fragment's category comes from the elements written at its top level (through
/// `@if`, `@for` and `@match`): [`Phrasing`] when all are phrasing content with no
/// interactive content inside, [`Interactive`] when some is, [`Flow`] when any is flow
/// content, [`ListItem`] for `<li>`s, [`TableRow`], [`TableCell`], [`SelectOption`],
/// [`Metadata`], or [`Document`] for `<html>`; kinds that do not mix (`<li>` beside
/// `<div>`) are an error. Text is phrasing content. A value spliced at the top level is
/// checked against that category, so a fragment of text and splices only is `Phrasing`
/// and takes no `Fragment<Interactive>` or `Fragment<Flow>`: wrap such splices in an
/// element. `<pre>` and `<textarea>` get a newline after their start tag, which the
/// parser drops, so that a leading newline of their content survives.
#[macro_export]
macro_rules! html {
    ($($markup:tt)*) => {
        $crate::__rt::html_in! { [$crate::__rt] $($markup)* }
    };
}

/// The markup of a live view: the same syntax and checks as [`html!`], rendered into a
/// [`Live`] that keeps its static parts (fixed at compile time, with a fingerprint)
/// apart from its slots, so that a change can be sent as the slots that changed.
///
/// ```
/// use kiln_html::{html, live_html, Live, Slot};
///
/// let count = 3;
/// let live: Live<()> = live_html! { p.count { "Count: " (count) } };
/// assert_eq!(live.to_html(), html! { p.count { "Count: " (count) } }.as_str());
/// assert_eq!(live.part().statics().parts(), ["<p class=\"count\">Count: ", "</p>"]);
/// assert_eq!(live.part().slots(), [Slot::Text("3".into())]);
/// ```
///
/// `@if`, `@match` and `@for` become nested slots ([`Slot::Part`], [`Slot::List`]);
/// `@for row in rows; key = row.id { .. }` gives each item a key, so that a reordered
/// list is sent as moves. Events (`on:click=(..)`) are kiln's: use `kiln::live_html!`.
#[macro_export]
macro_rules! live_html {
    ($($markup:tt)*) => {
        $crate::__rt::live_html_in! { [$crate::__rt] [] $($markup)* }
    };
}
