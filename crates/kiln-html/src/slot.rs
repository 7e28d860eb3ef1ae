//! What each element accepts as a splice `(value)`: one trait per content model, so a
//! value spliced where it does not belong fails with a message naming what belongs.
//!
//! The `html!` macro checks the elements written in it itself; these traits check the
//! values spliced into them, whose type alone tells their category. `P` is the parent
//! element (a marker type named after it), for the message.

use std::borrow::Cow;
use std::fmt;

use crate::fragment::{Flow, Fragment, Interactive, ListItem, Metadata, Phrasing, SelectOption, TableCell, TableRow};
use crate::raw::{PreEscaped, Reserve};
use crate::render::Render;

macro_rules! slots {
    ($($(#[$doc:meta])* $name:ident: $message:literal, $note:literal;)*) => {$(
        $(#[$doc])*
        #[diagnostic::on_unimplemented(message = $message, label = "not allowed here", note = $note)]
        pub trait $name<P>: Render {}
        impl<P, T: $name<P> + ?Sized> $name<P> for &T {}
        impl<P> $name<P> for Reserve {}
    )*};
}

slots! {
    /// Flow content: `<body>`, `<div>`, `<li>`, `<td>`, sections …
    InFlow: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts flow content",
        "splice text, a `Fragment<Flow>`, `Fragment<Phrasing>` or `Fragment<Interactive>`";
    /// Phrasing content: `<p>`, `<span>`, `<h1>`, `<label>` …
    InPhrasing: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts phrasing content",
        "splice text, a `Fragment<Phrasing>` or a `Fragment<Interactive>`; a `Fragment<Flow>` holds flow content";
    /// Content of `<a>` or `<button>`: no interactive content.
    InInert: "`{Self}` cannot be spliced into `<{P}>`: no interactive content is allowed here (in `<a>`, in `<button>`, or in a `Phrasing` fragment, which may go in them)",
        "splice text or a `Fragment<Phrasing>`; a `Fragment<Interactive>` holds links or form controls, and a `Fragment<Flow>` flow content";
    /// `<ul>`, `<ol>`, `<menu>`.
    InList: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts only `<li>`",
        "splice a `Fragment<ListItem>`";
    /// `<table>`, `<thead>`, `<tbody>`, `<tfoot>`.
    InTableRows: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts only `<tr>`",
        "splice a `Fragment<TableRow>`";
    /// `<tr>`.
    InTableRow: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts only `<td>` and `<th>`",
        "splice a `Fragment<TableCell>`";
    /// `<select>`, `<datalist>`, `<optgroup>`.
    InSelect: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts only `<option>` (and `<optgroup>` in `<select>`)",
        "splice a `Fragment<SelectOption>`";
    /// `<head>`.
    InHead: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts metadata content",
        "splice a `Fragment<Metadata>`; write `<title>` directly in `<head>`";
    /// `<title>`, `<option>`, `<textarea>`: text only.
    InText: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` accepts text only",
        "splice a string or a number";
    /// `<script>`, `<style>`: raw text, never escaped.
    InRawText: "`{Self}` cannot be spliced into `<{P}>`: `<{P}>` takes raw text, which is not escaped",
        "splice `PreEscaped(..)` after making sure it cannot close the element";
}

macro_rules! accept {
    ($slot:ident: $($t:ty),*) => {$( impl<P> $slot<P> for $t {} )*};
}

macro_rules! text {
    ($($t:ty),*) => {
        $( accept!(InFlow: $t); accept!(InPhrasing: $t); accept!(InInert: $t); accept!(InText: $t); )*
    };
}

text!(str, String, Cow<'_, str>, Box<str>, char, fmt::Arguments<'_>, f32, f64);
text!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

impl<P, T: AsRef<str>> InFlow<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InPhrasing<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InInert<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InText<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InRawText<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InHead<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InList<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InTableRows<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InTableRow<P> for PreEscaped<T> {}
impl<P, T: AsRef<str>> InSelect<P> for PreEscaped<T> {}

accept!(InFlow: Fragment<Flow>, Fragment<Phrasing>, Fragment<Interactive>);
accept!(InPhrasing: Fragment<Phrasing>, Fragment<Interactive>);
accept!(InInert: Fragment<Phrasing>);
accept!(InList: Fragment<ListItem>);
accept!(InTableRows: Fragment<TableRow>);
accept!(InTableRow: Fragment<TableCell>);
accept!(InSelect: Fragment<SelectOption>);
accept!(InHead: Fragment<Metadata>);
