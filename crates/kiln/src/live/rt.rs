//! What `kiln::live_html!` expands to: `kiln::html!`'s runtime and the events.
//!
//! Each event is checked against the view's event type `E` through a trait rather than
//! by unifying types: the first event in the markup must not decide `E` (the caller's
//! `Live<E>` does), so that an event of another type is reported where it is written.
//! The second impl of each trait exists only to keep the choice open until `E` is
//! known: no event type is ever a `Deferred<_>`.

pub use crate::markup::__rt::*;

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Never an event type: see the module's docs.
pub struct Deferred<E>(PhantomData<E>);

/// A value the markup names as an event of a view whose events are of type `E`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an event of this view: its events are `{E}`",
    label = "not a `{E}`",
    note = "`on:click` and the other value events take a value of the view's `Event` type, which `handle` receives"
)]
pub trait EventOf<E> {}

impl<E> EventOf<E> for E {}
impl<E> EventOf<Deferred<E>> for E {}

/// A variant the markup names for a form event of a view whose events are of type `E`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a variant of this view's events taking a form: its events are `{E}`",
    label = "not a `{E}` variant taking a form",
    note = "`on:submit`, `on:change` and `on:input` name a variant `Save(T)` of the view's `Event` type, `T: Deserialize`, that the form's fields decode into"
)]
pub trait FormEventOf<E> {}

impl<E, T: DeserializeOwned> FormEventOf<E> for fn(T) -> E {}
impl<E, T> FormEventOf<Deferred<E>> for fn(T) -> E {}

/// `on:click=(value)` and the other value events: `value` is of the view's event type,
/// rendered as JSON (escaped) that the page sends back as it is.
#[inline]
pub fn event_value<E, V: EventOf<E> + Serialize>(_events: &Events<E>, value: &V, buf: &mut String) {
    // Serialising an enum of the app's own into a string fails only for maps with
    // keys that are not strings; such an event renders empty and decodes as invalid.
    if let Ok(json) = serde_json::to_string(value) {
        kiln_html::escape(&json, buf);
    }
}

/// `on:submit=(Event::Save)` and the other form events: `Save` takes a payload the
/// form's fields decode into.
#[inline(always)]
pub fn event_form<E, F: FormEventOf<E>>(_events: &Events<E>, _variant: F) {}
