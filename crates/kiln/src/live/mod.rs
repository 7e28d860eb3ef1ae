//! Live views: pages whose state lives on the server, updated by typed events, with
//! only what changed sent to the page.
//!
//! A [`LiveView`] is typed state: [`mount`](LiveView::mount) builds it from the route
//! and the request, [`handle`](LiveView::handle) changes it for each event of the
//! view's own [`Event`](LiveView::Event) type, [`HandleInfo::handle_info`] for each
//! message the server pushes, and [`render`](LiveView::render) shows it with
//! [`kiln::live_html!`](crate::live_html): `html!`'s syntax and checks, compiled to the
//! markup's static parts (fixed at compile time, named by a fingerprint) and the slots
//! between them. [`Mounted`] runs one view for one page and gives, after each change,
//! the [`Diff`] to send; [`LiveTest`] drives a view in a test. The view's first answer
//! is its whole page on its typed route, [`App::live::<View>()`](crate::App::live),
//! readable without JavaScript, carrying a signed token; the client script connects
//! the same path as a WebSocket with that token, and the server runs the view for the
//! page there (see below). `docs/live.md` says what is built and what is not yet.
//!
//! # The socket
//!
//! - **Tied to its page.** The token is signed with the app's [`Key`](crate::Key) (an
//!   app with a live view must have one) and names the view, the page's route with its
//!   parameters and the visitor (the signed CSRF cookie); it expires
//!   ([`Limits::token_ttl`]). A socket offering no token, a forged or expired one, or
//!   one made for another view, page or visitor is answered 403. The view is mounted
//!   again from the socket's own request: its state is never taken from the page.
//! - **Events are checked.** Each is decoded into the view's event type; an invalid
//!   event (malformed, not of the view's type) is answered `{"error": ".."}`, and the
//!   [`Limits::max_errors`]th closes the socket with 1008; an event over the rate
//!   ([`Limits::events_per_second`]) is answered and dropped (the socket stays: its
//!   page's state would go with it); one over [`Limits::max_event_bytes`] closes the
//!   socket with 1009.
//! - **Bounded.** While more than [`Limits::max_unsent_bytes`] wait to be written, the
//!   view changes without sending; once the page has read, one diff from what it last
//!   got to the latest state goes. A socket never holds a queue of updates.
//! - **A panic** in the view's code closes its socket with 1011; the worker goes on.
//! - **Server push.** [`LiveView::connected`] subscribes the view to bus topics and
//!   sets timers ([`LiveSocket`]), delivered through [`HandleInfo`];
//!   [`LiveView::disconnected`] runs once the page has gone.
//! - **Where a proxy blocks WebSocket**, the client asks the same path for an event
//!   stream (`Accept: text/event-stream`, the token in the `Kiln-Live-Token` header):
//!   the same messages come as Server-Sent Events, and the page's events are `POST`s to
//!   the path naming the stream (`Kiln-Live-Stream`), under the same checks and limits.
//!
//! # The markup
//!
//! - A run of code between two statics (a splice, attribute values) is one **text
//!   slot**, rendered into one string.
//! - `@if` and `@match` are a **part** slot: the branch taken, with its own statics and
//!   slots (an `@if` without `@else` that is false is the empty part).
//! - `@for` is a **list** slot: its body's statics once and each item's slots.
//!   `@for row in &rows; key = row.id { .. }` keys each item (by its `Display`), so
//!   that a change of order is sent as moves; keys must be unique (a list whose keys
//!   repeat is sent whole).
//! - `on:click=(Event::Increment)` (also `keydown`, `keyup`, `focus`, `blur`) names an
//!   event: a value of the view's event type, rendered as JSON into
//!   `data-kiln-click`; a value of another type does not compile.
//!   `on:submit=(Event::Save)` (also `change`, `input`) names a variant taking one
//!   payload, `Save(T)` with `T: Deserialize`, which the form's fields decode into as
//!   [`Form<T>`](crate::Form) decodes a body; it renders `data-kiln-submit="Save"`, so the
//!   variant must keep its Rust name in serde (no `rename`).
//!
//! # The wire format (JSON)
//!
//! Compact JSON; an object's keys come in no particular order (slot `"10"` may precede
//! `"2"`), arrays are ordered.
//!
//! Server to page, a **rendering**:
//! - a text slot is a string;
//! - a part is `{"f": fingerprint, "s": [statics], "0": slot, "1": slot, ..}`: `"f"`
//!   is the statics' fingerprint in 16 hex digits and `"s"` is sent only the first
//!   time that fingerprint is sent to the page, which keeps the statics by it;
//! - a list is `{"f": .., "s": [..], "d": [[slots of item 0], [slots of item 1], ..],
//!   "k": [key 0, key 1, ..]}`, `"k"` only for a keyed, non-empty list.
//!
//! The **mount message** is the view's rendering. After a change, a **diff** of a part
//! is `{"i": diff of slot i, ..}` for the slots that changed only, and nothing at all
//! when none did (nothing is sent). The diff of a slot is:
//! - a text slot: the new string;
//! - a part: the diff of its slots when the same branch renders (same fingerprint),
//!   else the new branch's rendering (recognised by its `"f"`);
//! - an unkeyed list: `{"d": [[slots]..]}`, every item, the statics being known;
//! - a keyed list: `{"r": [removed keys], "o": [ops], "u": {key: diff of the item's
//!   slots}}`, each left out when empty. The page removes `"r"`, then applies `"o"`
//!   in order, each placing one item right after the item keyed `after` (`null`: first):
//!   `["i", key, after, [slots]]` inserts a new item, `["m", key, after]` moves one.
//!   The items that keep their relative order never move, so a sort sends the
//!   fewest moves and a one-row change sends `{"u": {key: {slot: value}}}`.
//!
//! A diff that changes one text slot only, through unchanged branches and keyed
//! lists' updates, is sent as a **leaf message** instead: the path (slot indices and,
//! at a keyed list, the item's key, joined by `.`), `=`, and the text verbatim:
//! `3.42.2=43` for `{"3":{"u":{"42":{"2":"43"}}}}`. It never starts with `{`; a key
//! that is empty or holds `.` or `=`, or a text with a CR, is sent as JSON.
//!
//! Page to server, an **event**: `{"event": value}` with the value of a
//! `data-kiln-click` (and the other value events) as it was rendered, or
//! `{"event": "Save", "form": "title=a&stars=4"}` with a form's fields URL-encoded.
//! An event that does not decode into the view's type is an [`EventError`], answered
//! `{"error": "why"}` (an object no diff can be: its key is not a slot's index).

mod client;
mod diff;
mod embed;
mod event;
mod leaf;
mod limits;
mod list;
mod mounted;
mod page;
mod post;
mod push;
mod replica;
mod share;
mod socket;
mod sse;
mod streams;
mod testing;
mod token;
mod transport;
mod view;
mod wire;

#[doc(hidden)]
#[path = "rt.rs"]
pub mod __rt;

pub(crate) use client::{ClientScript, client_path};
pub use diff::{Diff, Tracker};
pub use embed::Embed;
pub use event::{EventError, decode_event};
pub use kiln_html::{Item, List, Live, Part, Slot, Statics};
pub use limits::{EVENT_BURST, EVENTS_PER_SECOND, Limits, MAX_ERRORS, MAX_EVENT_BYTES, MAX_UNSENT_BYTES, TOKEN_TTL};
pub use mounted::Mounted;
pub(crate) use page::{MountArgs, page};
pub(crate) use post::events;
pub use testing::LiveTest;
pub use view::{HandleInfo, LiveSocket, LiveView};

/// The markup of a live view: [`html!`](crate::html)'s syntax and checks, rendered into
/// a [`Live`] whose statics and slots kiln diffs; `on:event=(..)` names the view's
/// events (see [`crate::live`]).
///
/// ```
/// use kiln::live::{Live, Slot};
/// use kiln::{html, live_html};
///
/// #[derive(serde::Serialize)]
/// enum Event {
///     Open(u32),
/// }
///
/// let rows = [(7, "seven"), (3, "three")];
/// let live: Live<Event> = live_html! {
///     ul { @for (id, name) in rows; key = id { li { button type="button" on:click=(Event::Open(id)) { (name) } } } }
/// };
/// let [Slot::List(list)] = live.part().slots() else { unreachable!() };
/// assert_eq!(list.items()[1].key(), Some("3"));
/// assert!(live.to_html().starts_with("<ul><li><button type=\"button\" data-kiln-click=\"{&quot;Open&quot;:7}\">seven"));
/// ```
#[macro_export]
macro_rules! live_html {
    ($($markup:tt)*) => {
        $crate::live::__rt::live_html_in! { [$crate::live::__rt] [events] $($markup)* }
    };
}
