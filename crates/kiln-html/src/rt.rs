//! What `html!` expands to; not a public API.

pub use crate::attr::{
    AttrValue, AutocompleteForm, ButtonType, CrossOrigin, Decoding, Dir, FormEnctype, FormMethod, InputType, Keyword,
    ListStyle, Loading, Number, Scope, TrueFalse, Wrap, YesNo,
};
pub use crate::fragment::{
    Document, Flow, Fragment, Interactive, ListItem, Metadata, Phrasing, SelectOption, TableCell, TableRow,
};
pub use crate::slot::*;
pub use crate::url::Href;
pub use kiln_html_macros::html_in;

/// Renders the fragment's body into a string of `capacity` bytes.
#[inline(always)]
pub fn build<C>(capacity: usize, body: impl FnOnce(&mut String)) -> Fragment<C> {
    let mut html = String::with_capacity(capacity);
    body(&mut html);
    Fragment::__checked(html)
}

macro_rules! splices {
    ($($f:ident: $slot:ident,)*) => {$(
        #[inline(always)]
        pub fn $f<T: $slot + ?Sized>(value: &T, buf: &mut String) {
            value.render_to(buf);
        }
    )*};
}

splices! {
    in_flow: InFlow,
    in_phrasing: InPhrasing,
    in_inert: InInert,
    in_list: InList,
    in_table_rows: InTableRows,
    in_table_row: InTableRow,
    in_select: InSelect,
    in_head: InHead,
    in_text: InText,
    in_raw_text: InRawText,
}

/// A text attribute's value.
#[inline(always)]
pub fn attr<T: AttrValue + ?Sized>(value: &T, buf: &mut String) {
    value.render_to(buf);
}

/// A link attribute's value.
#[inline(always)]
pub fn href<T: Href + ?Sized>(value: &T, buf: &mut String) {
    value.write_href(buf);
}

/// An integer attribute's value.
#[inline(always)]
pub fn number<T: Number + ?Sized>(value: &T, buf: &mut String) {
    value.write_number(buf);
}

/// A keyword attribute's value, of exactly the type `K`.
#[inline(always)]
pub fn keyword<K: Keyword>(value: K, buf: &mut String) {
    buf.push_str(value.as_str());
}
