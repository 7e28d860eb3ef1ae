//! What goes on the wire: a rendering as the client first receives it, and the
//! difference between two renderings of the same view (the format is in `mod.rs`).

use std::collections::HashSet;
use std::fmt;

use kiln_html::{Item, List, Part, Slot, Statics};
use serde_json::{Map, Value};

use crate::live::list;

/// One message from a view to its page: the whole rendering at mount, then what
/// changed after each update. Empty when nothing changed: then nothing is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff(Option<Value>);

impl Diff {
    /// Whether nothing changed, and there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The message as JSON, `None` when there is nothing to send.
    pub fn json(&self) -> Option<&Value> {
        self.0.as_ref()
    }

    /// The message as compact JSON text, `None` when there is nothing to send.
    pub fn to_json(&self) -> Option<String> {
        self.0.as_ref().map(Value::to_string)
    }
}

impl fmt::Display for Diff {
    /// The compact JSON text; nothing for an empty diff.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(json) => write!(f, "{json}"),
            None => Ok(()),
        }
    }
}

/// The last rendering of one mounted view, and which statics its client holds.
#[derive(Debug)]
pub struct Tracker {
    last: Part,
    /// Fingerprints whose statics were sent: sent once, named by fingerprint after.
    sent: HashSet<u64>,
}

impl Tracker {
    /// Starts tracking a view from its first rendering; the [`Diff`] is the mount
    /// message, with every statics, fingerprint and slot.
    pub fn mount(part: Part) -> (Tracker, Diff) {
        let mut sent = HashSet::new();
        let json = Writer { sent: &mut sent }.part(&part);
        (Tracker { last: part, sent }, Diff(Some(json)))
    }

    /// Records a new rendering and gives what changed since the last one.
    pub fn update(&mut self, part: Part) -> Diff {
        let mut writer = Writer { sent: &mut self.sent };
        let json = if same_statics(self.last.statics(), part.statics()) {
            writer.part_diff(&self.last, &part).map(Value::Object)
        } else {
            Some(writer.part(&part))
        };
        self.last = part;
        Diff(json)
    }

    /// The last rendering.
    pub fn last(&self) -> &Part {
        &self.last
    }
}

fn same_statics(a: &Statics, b: &Statics) -> bool {
    a.fingerprint() == b.fingerprint()
}

/// Writes renderings and diffs, adding the statics a client lacks.
struct Writer<'a> {
    sent: &'a mut HashSet<u64>,
}

impl Writer<'_> {
    /// `"f"` and, the first time, `"s"`.
    fn statics(&mut self, statics: &Statics, json: &mut Map<String, Value>) {
        json.insert("f".into(), Value::String(format!("{:016x}", statics.fingerprint())));
        if self.sent.insert(statics.fingerprint()) {
            json.insert("s".into(), statics.parts().iter().map(|s| Value::from(*s)).collect());
        }
    }

    fn part(&mut self, part: &Part) -> Value {
        let mut json = Map::new();
        self.statics(part.statics(), &mut json);
        for (i, slot) in part.slots().iter().enumerate() {
            let slot = self.slot(slot);
            json.insert(i.to_string(), slot);
        }
        Value::Object(json)
    }

    fn slots(&mut self, slots: &[Slot]) -> Value {
        slots.iter().map(|slot| self.slot(slot)).collect()
    }

    fn slot(&mut self, slot: &Slot) -> Value {
        match slot {
            Slot::Text(text) => Value::from(text.as_str()),
            Slot::Part(part) => self.part(part),
            Slot::List(list) => self.list(list),
        }
    }

    fn list(&mut self, list: &List) -> Value {
        let mut json = Map::new();
        self.statics(list.statics(), &mut json);
        json.insert("d".into(), list.items().iter().map(|item| self.slots(item.slots())).collect());
        if list.is_keyed() && !list.items().is_empty() {
            json.insert("k".into(), list.items().iter().map(|item| Value::from(item.key())).collect());
        }
        Value::Object(json)
    }

    /// The slots of `new` that differ from `old`'s, which has the same statics.
    fn part_diff(&mut self, old: &Part, new: &Part) -> Option<Map<String, Value>> {
        self.slots_diff(old.slots(), new.slots())
    }

    fn slots_diff(&mut self, old: &[Slot], new: &[Slot]) -> Option<Map<String, Value>> {
        let mut json = Map::new();
        for (i, (old, new)) in old.iter().zip(new).enumerate() {
            if let Some(diff) = self.slot_diff(old, new) {
                json.insert(i.to_string(), diff);
            }
        }
        (!json.is_empty()).then_some(json)
    }

    fn slot_diff(&mut self, old: &Slot, new: &Slot) -> Option<Value> {
        match (old, new) {
            (Slot::Text(old), Slot::Text(new)) => (old != new).then(|| Value::from(new.as_str())),
            (Slot::Part(old), Slot::Part(new)) if same_statics(old.statics(), new.statics()) => {
                self.part_diff(old, new).map(Value::Object)
            }
            (Slot::List(old), Slot::List(new)) if same_statics(old.statics(), new.statics()) => {
                self.list_diff(old, new)
            }
            (old, new) if old == new => None,
            (_, new) => Some(self.slot(new)),
        }
    }

    fn list_diff(&mut self, old: &List, new: &List) -> Option<Value> {
        if old.items() == new.items() {
            return None;
        }
        if old.is_keyed() && new.is_keyed() {
            if let Some(ops) = list::keyed_diff(self, old.items(), new.items()) {
                return (!ops.is_empty()).then_some(Value::Object(ops));
            }
        }
        // An unkeyed list (or one whose keys repeat) is sent whole, its statics known.
        let items: Vec<Value> = new.items().iter().map(|item: &Item| self.slots(item.slots())).collect();
        let mut json = Map::new();
        json.insert("d".into(), Value::Array(items));
        Some(Value::Object(json))
    }
}

impl list::SlotWriter for Writer<'_> {
    fn slots(&mut self, slots: &[Slot]) -> Value {
        Writer::slots(self, slots)
    }

    fn slots_diff(&mut self, old: &[Slot], new: &[Slot]) -> Option<Map<String, Value>> {
        Writer::slots_diff(self, old, new)
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
    fn a_one_slot_change_carries_that_slot_only() {
        let (mut tracker, _) = Tracker::mount(page("Hi", 1).into_part());
        let diff = tracker.update(page("Hi", 2).into_part());
        assert_eq!(diff.to_json().as_deref(), Some(r#"{"1":"2"}"#));
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
