//! The leaf message: a diff that changes one text slot only, sent as the slot's path
//! and its new text (`3.42.2=43`) instead of JSON (`{"3":{"u":{"42":{"2":"43"}}}}`):
//! most updates change one slot, and JSON's braces and quotes were most of their bytes.
//!
//! The path is the steps from the root, joined by `.`: at a part, the slot's index;
//! at a keyed list, the item's key. The page tells the two forms apart by the first
//! byte (a leaf never starts with `{`), and takes everything after the first `=` as
//! the text, unescaped.

use std::fmt::Write;

/// One step from the root to a slot.
#[derive(Clone, Copy)]
pub(crate) enum Step<'p> {
    /// A part's slot, by index.
    Slot(usize),
    /// A keyed list's item, by key.
    Key(&'p str),
}

/// What a diff written so far changed, as far as a leaf message is concerned.
#[derive(Default)]
pub(crate) enum Leaf {
    /// No text slot yet, and nothing else.
    #[default]
    Nothing,
    /// One text slot, and nothing else: the leaf message.
    One(String),
    /// More than one slot, or something other than a text slot: JSON.
    Not,
}

impl Leaf {
    /// A text slot at `path` changed to `text`.
    pub(crate) fn text(&mut self, path: &[Step<'_>], text: &str) {
        *self = match self {
            Leaf::Nothing => message(path, text).map_or(Leaf::Not, Leaf::One),
            _ => Leaf::Not,
        };
    }

    /// Something other than a text slot changed: a rendering sent, a list sent whole,
    /// an item removed, inserted or moved.
    pub(crate) fn reshaped(&mut self) {
        *self = Leaf::Not;
    }

    /// The leaf message, if the diff is one.
    pub(crate) fn into_message(self) -> Option<String> {
        match self {
            Leaf::One(message) => Some(message),
            _ => None,
        }
    }
}

/// `path=text`, or `None` when a key cannot be a step (empty, or holding the `.` or
/// `=` that delimit steps) or the text holds a CR, which an event stream's `data:`
/// lines cannot carry (they are joined back with LF).
fn message(path: &[Step<'_>], text: &str) -> Option<String> {
    if text.contains('\r') {
        return None;
    }
    let mut out = String::with_capacity(16 + text.len());
    for (i, step) in path.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        match *step {
            Step::Slot(index) => {
                let _ = write!(out, "{index}");
            }
            Step::Key(key) if key.is_empty() || key.contains(['.', '=']) => return None,
            Step::Key(key) => out.push_str(key),
        }
    }
    out.push('=');
    out.push_str(text);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{Leaf, Step};

    fn leaf(path: &[Step<'_>], text: &str) -> Option<String> {
        let mut leaf = Leaf::default();
        leaf.text(path, text);
        leaf.into_message()
    }

    #[test]
    fn a_leaf_is_the_path_then_the_text_verbatim() {
        assert_eq!(leaf(&[Step::Slot(3), Step::Key("42"), Step::Slot(2)], "43").as_deref(), Some("3.42.2=43"));
        assert_eq!(leaf(&[Step::Slot(2)], "a=b.\"c\"\nd").as_deref(), Some("2=a=b.\"c\"\nd"));
        assert_eq!(leaf(&[Step::Slot(0)], "").as_deref(), Some("0="));
    }

    #[test]
    fn a_key_that_cannot_be_a_step_or_a_cr_falls_back_to_json() {
        for key in ["", "a.b", "a=b"] {
            assert_eq!(leaf(&[Step::Slot(0), Step::Key(key), Step::Slot(0)], "x"), None, "{key:?}");
        }
        assert_eq!(leaf(&[Step::Slot(0)], "a\r\nb"), None);
    }

    #[test]
    fn two_slots_or_a_reshape_are_not_a_leaf() {
        let mut two = Leaf::default();
        two.text(&[Step::Slot(0)], "a");
        two.text(&[Step::Slot(1)], "b");
        assert_eq!(two.into_message(), None);
        let mut reshaped = Leaf::default();
        reshaped.text(&[Step::Slot(0)], "a");
        reshaped.reshaped();
        assert_eq!(reshaped.into_message(), None);
    }
}
