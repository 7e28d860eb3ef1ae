//! What `kiln::live_html!` expands to: `kiln::html!`'s runtime and the events.

pub use crate::markup::__rt::*;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// `on:click=(value)` and the other value events: `value` is of the view's event type,
/// rendered as JSON (escaped) that the page sends back as it is.
#[inline]
pub fn event_value<E: Serialize>(_events: &Events<E>, value: &E, buf: &mut String) {
    // Serialising an enum of the app's own into a string fails only for maps with
    // keys that are not strings; such an event renders empty and decodes as invalid.
    if let Ok(json) = serde_json::to_string(value) {
        kiln_html::escape(&json, buf);
    }
}

/// `on:submit=(Event::Save)` and the other form events: `Save` takes a payload the
/// form's fields decode into.
#[inline(always)]
pub fn event_form<E, T: DeserializeOwned>(_events: &Events<E>, _variant: fn(T) -> E) {}
