//! What `html!` expands to; not a public API.

pub use crate::attr::{
    AttrValue, AutocompleteForm, ButtonType, CrossOrigin, Decoding, Dir, FormEnctype, FormMethod, InputType, Keyword,
    ListStyle, Loading, Number, Scope, TrueFalse, Wrap, YesNo,
};
pub use crate::el;
pub use crate::fragment::{
    Document, Flow, Fragment, Interactive, ListItem, Metadata, Phrasing, SelectOption, TableCell, TableRow,
};
pub use crate::live::{Events, Item, List, Live, Part, Slot, Statics, key};
pub use crate::slot::*;
pub use crate::url::Href;
pub use kiln_html_macros::{html_in, live_html_in};

use std::sync::atomic::{AtomicUsize, Ordering};

/// The size of what one `html!` rendered last time, so that the next rendering
/// allocates its string once instead of growing it by doubling (each step a copy).
pub struct SizeHint(AtomicUsize);

/// The most a hint asks for up front: past this, a string grows as it needs.
const MAX_HINT: usize = 1 << 20;

impl SizeHint {
    /// No hint yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        SizeHint(AtomicUsize::new(0))
    }

    /// The capacity to start with: the last size seen, at least the static markup's
    /// size. (Not more: a margin can push a large page past the allocator's `mmap`
    /// threshold, which costs more than the rare second growth it saves.)
    #[inline]
    pub fn get(&self, static_len: usize) -> usize {
        self.0.load(Ordering::Relaxed).max(static_len)
    }

    /// Records the size of a rendering.
    #[inline]
    pub fn record(&self, len: usize) {
        let hint = len.min(MAX_HINT);
        if self.0.load(Ordering::Relaxed) != hint {
            self.0.store(hint, Ordering::Relaxed);
        }
    }
}

macro_rules! splices {
    ($($f:ident: $slot:ident,)*) => {$(
        #[inline(always)]
        pub fn $f<P, T: $slot<P> + ?Sized>(value: &T, buf: &mut String) {
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
