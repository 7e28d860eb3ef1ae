//! The live expansion's own state, which `html!`'s expander carries when it runs for
//! `live_html!` (`live.rs`): a file of its own so that the expander need not import the
//! live expansion that extends it.

use proc_macro2::Ident;

/// What a live expansion needs beyond `html!`'s.
pub(crate) struct Mode {
    /// The variable that ties every event to the view's event type (kiln's runtime),
    /// or `None` where events are not available (kiln-html alone).
    pub(crate) events: Option<Ident>,
    /// The variable each slot list is built in; `None` for the expansion that writes
    /// the markup straight into a string as `html!` does (a page's first answer).
    pub(crate) slots: Option<Ident>,
}
