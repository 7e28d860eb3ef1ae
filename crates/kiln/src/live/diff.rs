//! What goes on the wire: a rendering as the client first receives it, and the
//! difference between two renderings of the same view (the format is in `mod.rs`),
//! written straight into the message's text; a diff that changes one text slot only
//! is sent as a leaf message, `path=text` (`leaf.rs`).

use std::cell::OnceCell;
use std::fmt;
use std::rc::Rc;

use kiln_html::{Item, List, Part, Slot, Statics};
use serde_json::Value;

use crate::live::leaf::{Leaf, Step};
use crate::live::{list, wire};

/// One message from a view to its page: the whole rendering at mount, then what
/// changed after each update. Empty when nothing changed: then nothing is sent.
///
/// A diff that changes one text slot only is sent as a **leaf message**,
/// `path=text` (`3.42.2=43`: slot 3, the item keyed `42`, its slot 2, now `43`);
/// [`as_str`](Self::as_str) is what is sent, and [`json`](Self::json) and
/// [`to_json`](Self::to_json) give every message as JSON: for a leaf, the JSON diff it
/// stands for (`{"3":{"u":{"42":{"2":"43"}}}}`).
#[derive(Clone, Default)]
pub struct Diff {
    /// The message's text, shared by every page sent the same message; for a leaf
    /// message, followed by the JSON diff it stands for (one allocation for both).
    text: Option<Rc<str>>,
    /// The length of the message sent, at the start of `text`.
    sent: usize,
    /// The JSON diff parsed, when asked for.
    json: OnceCell<Value>,
}

impl Diff {
    /// A message whose text is `text` after the first `sent` bytes, if any, which
    /// are sent instead (a leaf message).
    fn new(text: Option<Rc<str>>, sent: usize) -> Self {
        Diff { text, sent, json: OnceCell::new() }
    }

    /// Whether nothing changed, and there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.text.is_none()
    }

    /// Whether the message is a leaf message (`path=text`) rather than JSON.
    pub fn is_leaf(&self) -> bool {
        self.text.as_deref().is_some_and(|text| self.sent < text.len())
    }

    /// The message as JSON (parsed; for a leaf message, the JSON diff it stands for),
    /// `None` when there is nothing to send.
    pub fn json(&self) -> Option<&Value> {
        let text = self.json_str()?;
        Some(self.json.get_or_init(|| serde_json::from_str(text).expect("a diff is JSON")))
    }

    /// The message as compact JSON text (for a leaf message, the JSON diff it stands
    /// for), `None` when there is nothing to send.
    pub fn to_json(&self) -> Option<String> {
        self.json_str().map(str::to_owned)
    }

    /// The message's text as sent: compact JSON, or a leaf message. `None` when there
    /// is nothing to send.
    pub fn as_str(&self) -> Option<&str> {
        let text = self.text.as_deref()?;
        Some(if self.sent < text.len() { &text[..self.sent] } else { text })
    }

    fn json_str(&self) -> Option<&str> {
        let text = self.text.as_deref()?;
        Some(if self.sent < text.len() { &text[self.sent..] } else { text })
    }
}

impl PartialEq for Diff {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Diff {}

impl fmt::Debug for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Diff").field(&self.as_str()).finish()
    }
}

impl fmt::Display for Diff {
    /// The text as sent; nothing for an empty diff.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str().unwrap_or(""))
    }
}

/// The last rendering of one mounted view, and which statics its client holds.
#[derive(Debug)]
pub struct Tracker {
    /// Shared with other views in the same state when the view has a
    /// [`render_key`](crate::live::LiveView::render_key).
    last: Rc<Part>,
    /// The render key `last` was rendered under, if the view gives one.
    key: Option<u64>,
    /// Fingerprints whose statics were sent: sent once, named by fingerprint after. A
    /// view has a handful of blocks, so a list searched in order is smallest.
    sent: Vec<u64>,
}

/// Which statics a message named, in order, and whether it sent their parts: another
/// page may be sent the same text only if it holds exactly the statics this one did.
pub(crate) type StaticsLog = Vec<(u64, bool)>;

impl Tracker {
    /// Starts tracking a view from its first rendering; the [`Diff`] is the mount
    /// message, with every statics, fingerprint and slot.
    pub fn mount(part: Part) -> (Tracker, Diff) {
        let (tracker, diff, _) = Tracker::mount_shared(Rc::new(part), None);
        (tracker, diff)
    }

    /// Records a new rendering and gives what changed since the last one.
    pub fn update(&mut self, part: Part) -> Diff {
        self.update_shared(Rc::new(part), None).0
    }

    /// The last rendering.
    pub fn last(&self) -> &Part {
        &self.last
    }

    /// The render key of the last rendering.
    pub(crate) fn key(&self) -> Option<u64> {
        self.key
    }

    /// [`mount`](Self::mount) of a rendering made under `key`, with the statics it sent.
    pub(crate) fn mount_shared(part: Rc<Part>, key: Option<u64>) -> (Tracker, Diff, StaticsLog) {
        let mut tracker = Tracker { last: part, key, sent: Vec::new() };
        let mut writer = Writer::new(&mut tracker.sent);
        writer.part(&tracker.last);
        let (diff, log) = writer.finish();
        (tracker, diff, log)
    }

    /// [`update`](Self::update) to a rendering made under `key`, with the statics it sent.
    pub(crate) fn update_shared(&mut self, part: Rc<Part>, key: Option<u64>) -> (Diff, StaticsLog) {
        let mut writer = Writer::new(&mut self.sent);
        if same_statics(self.last.statics(), part.statics()) {
            writer.part_diff(&self.last, &part);
        } else {
            writer.leaf.reshaped();
            writer.part(&part);
        }
        let (diff, log) = writer.finish();
        self.last = part;
        self.key = key;
        (diff, log)
    }

    /// The tracker of a page mounted with the mount message made for another page
    /// (by [`mount_shared`](Self::mount_shared)): `None` only if that message did not
    /// send every statics it named, which a mount message always does.
    pub(crate) fn mount_following(part: &Rc<Part>, key: Option<u64>, log: &StaticsLog) -> Option<Tracker> {
        let mut tracker = Tracker { last: Rc::clone(part), key, sent: Vec::new() };
        tracker.follow(part, key, log).then_some(tracker)
    }

    /// Takes a message made for another page (by [`mount_shared`](Self::mount_shared)
    /// or [`update_shared`](Self::update_shared)) from the same rendering this page
    /// holds to `part`, if this page holds the statics that one did; `false` (and
    /// nothing changed) otherwise.
    pub(crate) fn follow(&mut self, part: &Rc<Part>, key: Option<u64>, log: &StaticsLog) -> bool {
        for (i, &(fingerprint, with_parts)) in log.iter().enumerate() {
            let held = self.sent.contains(&fingerprint) || log[..i].iter().any(|&(f, sent)| sent && f == fingerprint);
            if with_parts == held {
                return false;
            }
        }
        self.sent.extend(log.iter().filter(|(_, with_parts)| *with_parts).map(|(fingerprint, _)| *fingerprint));
        self.last = Rc::clone(part);
        self.key = key;
        true
    }
}

fn same_statics(a: &Statics, b: &Statics) -> bool {
    a.fingerprint() == b.fingerprint()
}

/// Writes renderings and diffs as JSON text, adding the statics a client lacks, and
/// notes whether a diff is a leaf message.
struct Writer<'a, 'p> {
    sent: &'a mut Vec<u64>,
    out: String,
    log: StaticsLog,
    /// The slots and keys from the root to the slot being diffed.
    path: Vec<Step<'p>>,
    leaf: Leaf,
}

impl<'a, 'p> Writer<'a, 'p> {
    fn new(sent: &'a mut Vec<u64>) -> Self {
        // Most diffs are a few slots: one allocation, rarely grown.
        Writer { sent, out: String::with_capacity(128), log: Vec::new(), path: Vec::new(), leaf: Leaf::default() }
    }

    /// The message written, empty when nothing was.
    fn finish(self) -> (Diff, StaticsLog) {
        if self.out.is_empty() {
            return (Diff::default(), self.log);
        }
        let diff = match self.leaf.into_message() {
            Some(mut leaf) => {
                let sent = leaf.len();
                leaf.push_str(&self.out);
                Diff::new(Some(Rc::from(leaf)), sent)
            }
            None => Diff::new(Some(Rc::from(self.out)), usize::MAX),
        };
        (diff, self.log)
    }

    /// `"f"` and, the first time, `"s"`.
    fn statics(&mut self, statics: &Statics) {
        let fingerprint = statics.fingerprint();
        self.out.push_str("\"f\":");
        wire::fingerprint(&mut self.out, fingerprint);
        let new = !self.sent.contains(&fingerprint);
        self.log.push((fingerprint, new));
        if new {
            self.sent.push(fingerprint);
            self.out.push_str(",\"s\":[");
            for (i, part) in statics.parts().iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                wire::string(&mut self.out, part);
            }
            self.out.push(']');
        }
    }

    fn part(&mut self, part: &Part) {
        self.out.push('{');
        self.statics(part.statics());
        for (i, slot) in part.slots().iter().enumerate() {
            self.out.push(',');
            wire::index_key(&mut self.out, i);
            self.slot(slot);
        }
        self.out.push('}');
    }

    fn slots(&mut self, slots: &[Slot]) {
        self.out.push('[');
        for (i, slot) in slots.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.slot(slot);
        }
        self.out.push(']');
    }

    fn slot(&mut self, slot: &Slot) {
        match slot {
            Slot::Text(text) => wire::string(&mut self.out, text),
            Slot::Part(part) => self.part(part),
            Slot::List(list) => self.list(list),
        }
    }

    fn items(&mut self, items: &[Item]) {
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.slots(item.slots());
        }
        self.out.push(']');
    }

    fn list(&mut self, list: &List) {
        self.out.push('{');
        self.statics(list.statics());
        self.out.push_str(",\"d\":");
        self.items(list.items());
        if list.is_keyed() && !list.items().is_empty() {
            self.out.push_str(",\"k\":[");
            for (i, item) in list.items().iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                wire::string(&mut self.out, item.key().unwrap_or_default());
            }
            self.out.push(']');
        }
        self.out.push('}');
    }

    /// The slots of `new` that differ from `old`'s, which has the same statics.
    fn part_diff(&mut self, old: &'p Part, new: &'p Part) -> bool {
        self.slots_diff(old.slots(), new.slots())
    }

    /// Writes `{"i": diff}` for the slots that changed; nothing (false) when none did.
    fn slots_diff(&mut self, old: &'p [Slot], new: &'p [Slot]) -> bool {
        let start = self.out.len();
        self.out.push('{');
        let mut changed = false;
        for (i, (old, new)) in old.iter().zip(new).enumerate() {
            let mark = self.out.len();
            if changed {
                self.out.push(',');
            }
            wire::index_key(&mut self.out, i);
            self.path.push(Step::Slot(i));
            let slot_changed = self.slot_diff(old, new);
            self.path.pop();
            if slot_changed {
                changed = true;
            } else {
                self.out.truncate(mark);
            }
        }
        if changed {
            self.out.push('}');
        } else {
            self.out.truncate(start);
        }
        changed
    }

    /// Writes a slot's diff; nothing (false) when it did not change.
    fn slot_diff(&mut self, old: &'p Slot, new: &'p Slot) -> bool {
        match (old, new) {
            (Slot::Text(old), Slot::Text(new)) if old == new => false,
            (Slot::Text(_), Slot::Text(new)) => {
                self.leaf.text(&self.path, new);
                wire::string(&mut self.out, new);
                true
            }
            (Slot::Part(old), Slot::Part(new)) if same_statics(old.statics(), new.statics()) => {
                self.part_diff(old, new)
            }
            (Slot::List(old), Slot::List(new)) if same_statics(old.statics(), new.statics()) => {
                self.list_diff(old, new)
            }
            (old, new) if old == new => false,
            (_, new) => {
                self.leaf.reshaped();
                self.slot(new);
                true
            }
        }
    }

    fn list_diff(&mut self, old: &'p List, new: &'p List) -> bool {
        if old.items() == new.items() {
            return false;
        }
        if old.is_keyed() && new.is_keyed() {
            if let Some(changed) = list::keyed_diff(self, old.items(), new.items()) {
                return changed;
            }
        }
        // An unkeyed list (or one whose keys repeat) is sent whole, its statics known.
        self.leaf.reshaped();
        self.out.push_str("{\"d\":");
        self.items(new.items());
        self.out.push('}');
        true
    }
}

impl<'p> list::SlotWriter<'p> for Writer<'_, 'p> {
    fn out(&mut self) -> &mut String {
        &mut self.out
    }

    fn slots(&mut self, slots: &[Slot]) {
        Writer::slots(self, slots)
    }

    fn item_diff(&mut self, key: &'p str, old: &'p [Slot], new: &'p [Slot]) -> bool {
        self.path.push(Step::Key(key));
        let changed = Writer::slots_diff(self, old, new);
        self.path.pop();
        changed
    }

    fn reshaped(&mut self) {
        self.leaf.reshaped();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Tracker;
    use crate::live::Live;

    fn page(title: &str, count: u32) -> Live<()> {
        crate::live_html! { div { h1 { (title) } p { "Count: " (count) } } }
    }

    fn rows(rows: &[(u32, &str)]) -> Live<()> {
        crate::live_html! { ul { @for (id, name) in rows; key = id { li { (name) } } } }
    }

    /// The diff of the list slot (slot 0) after `before` and then `after`.
    fn list_diff(before: &[(u32, &str)], after: &[(u32, &str)]) -> serde_json::Value {
        let (mut tracker, _) = Tracker::mount(rows(before).into_part());
        let diff = tracker.update(rows(after).into_part());
        diff.json().expect("a change")["0"].clone()
    }

    #[test]
    fn the_mount_message_carries_statics_fingerprint_and_every_slot() {
        let live = page("Hi", 1);
        let fingerprint = format!("{:016x}", live.part().statics().fingerprint());
        let (_, mount) = Tracker::mount(live.into_part());
        assert_eq!(
            mount.json(),
            Some(&json!({"f": fingerprint, "s": ["<div><h1>", "</h1><p>Count: ", "</p></div>"], "0": "Hi", "1": "1"}))
        );
    }

    #[test]
    fn a_one_slot_change_is_a_leaf_message() {
        let (mut tracker, _) = Tracker::mount(page("Hi", 1).into_part());
        let diff = tracker.update(page("Hi", 2).into_part());
        assert_eq!(diff.as_str(), Some("1=2"));
        assert!(diff.is_leaf());
        assert_eq!(diff.to_json().as_deref(), Some(r#"{"1":"2"}"#), "its JSON is the diff it stands for");
        assert_eq!(diff.to_string(), "1=2");
    }

    #[test]
    fn a_keyed_row_cell_change_is_a_leaf_message_through_the_key() {
        let (mut tracker, _) = Tracker::mount(rows(&[(1, "a"), (42, "b")]).into_part());
        let diff = tracker.update(rows(&[(1, "a"), (42, "B")]).into_part());
        assert_eq!(diff.as_str(), Some("0.42.0=B"));
        assert_eq!(diff.json(), Some(&json!({"0": {"u": {"42": {"0": "B"}}}})));
    }

    #[test]
    fn a_change_of_two_slots_stays_json() {
        let (mut tracker, _) = Tracker::mount(page("Hi", 1).into_part());
        let diff = tracker.update(page("Ho", 2).into_part());
        assert!(!diff.is_leaf());
        assert_eq!(diff.as_str(), Some(r#"{"0":"Ho","1":"2"}"#));
        let (mut tracker, _) = Tracker::mount(rows(&[(1, "a"), (2, "b")]).into_part());
        let diff = tracker.update(rows(&[(2, "B"), (1, "a")]).into_part());
        assert!(!diff.is_leaf(), "a move beside the change: {diff:?}");
    }

    #[test]
    fn a_key_with_a_dot_falls_back_to_json() {
        fn named(rows: &[(&str, &str)]) -> Live<()> {
            crate::live_html! { ul { @for (id, name) in rows; key = id { li { (name) } } } }
        }
        let (mut tracker, _) = Tracker::mount(named(&[("a.b", "x")]).into_part());
        let diff = tracker.update(named(&[("a.b", "y")]).into_part());
        assert_eq!(diff.as_str(), Some(r#"{"0":{"u":{"a.b":{"0":"y"}}}}"#));
    }

    #[test]
    fn an_unchanged_page_sends_nothing() {
        let (mut tracker, _) = Tracker::mount(page("Hi", 1).into_part());
        let diff = tracker.update(page("Hi", 1).into_part());
        assert!(diff.is_empty());
        assert_eq!(diff.to_json(), None);
        assert!(tracker.update(rows(&[]).into_part()).json().is_some(), "another view is sent whole");
    }

    #[test]
    fn a_keyed_list_move_is_sent_as_a_move() {
        let diff = list_diff(&[(1, "a"), (2, "b"), (3, "c")], &[(3, "c"), (1, "a"), (2, "b")]);
        assert_eq!(diff, json!({"o": [["m", "3", null]]}));
        let diff = list_diff(&[(1, "a"), (2, "b"), (3, "c")], &[(2, "b"), (3, "c"), (1, "a")]);
        assert_eq!(diff, json!({"o": [["m", "1", "3"]]}));
    }

    #[test]
    fn a_keyed_list_insert_and_remove_are_sent_as_such() {
        let diff = list_diff(&[(1, "a"), (2, "b")], &[(1, "a"), (4, "d"), (2, "b")]);
        assert_eq!(diff, json!({"o": [["i", "4", "1", ["d"]]]}));
        let diff = list_diff(&[(1, "a"), (2, "b"), (3, "c")], &[(1, "a"), (3, "c")]);
        assert_eq!(diff, json!({"r": ["2"]}));
        let diff = list_diff(&[(1, "a"), (2, "b")], &[(1, "a"), (2, "B")]);
        assert_eq!(diff, json!({"u": {"2": {"0": "B"}}}));
    }

    #[test]
    fn statics_are_sent_once_per_fingerprint() {
        let (mut tracker, mount) = Tracker::mount(rows(&[]).into_part());
        assert!(mount.json().unwrap()["0"].get("s").is_some(), "the list's statics at mount, even empty");
        let diff = tracker.update(rows(&[(1, "a")]).into_part());
        assert_eq!(diff.json(), Some(&json!({"0": {"o": [["i", "1", null, ["a"]]]}})));
    }
}
