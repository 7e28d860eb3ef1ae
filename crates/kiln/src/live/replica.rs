//! The page's copy of a view, rebuilt from the wire alone: what a client holds after
//! the mount message and each diff. [`LiveTest`](crate::live::LiveTest) checks after
//! every message that it renders what the server renders, so the wire format is
//! proven complete; it is also the reference the client script follows.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// What went wrong applying a message: the server sent something the page cannot use.
pub(crate) type Broken = String;

/// Statics by fingerprint, and the slot tree of the view.
#[derive(Default)]
pub(crate) struct Replica {
    statics: HashMap<String, Vec<String>>,
    root: Option<Node>,
}

enum Node {
    Text(String),
    Part { fingerprint: String, slots: Vec<Node> },
    List { fingerprint: String, items: Vec<ListItem> },
}

/// An item of a list: its key, if keyed, and its slots.
type ListItem = (Option<String>, Vec<Node>);

impl Replica {
    /// Applies the mount message or a diff, as sent: JSON, or a leaf message.
    pub(crate) fn apply(&mut self, message: &str) -> Result<(), Broken> {
        let mut root = self.root.take();
        let applied = match &mut root {
            Some(root) if !message.starts_with('{') => Self::leaf(root, message),
            _ => {
                let json: Value = serde_json::from_str(message).map_err(|e| format!("not JSON: {e}"))?;
                match &mut root {
                    None => self.rendered(&json).map(|rendered| root = Some(rendered)),
                    Some(root) => self.patch(root, &json),
                }
            }
        };
        self.root = root;
        applied
    }

    /// Sets the text slot at a leaf message's path (`3.42.2=text`: slot 3, the item
    /// keyed `42`, its slot 2) to the text after the first `=`.
    fn leaf(root: &mut Node, message: &str) -> Result<(), Broken> {
        let (path, text) = message.split_once('=').ok_or("a leaf message without `=`")?;
        let mut steps = path.split('.');
        let mut node = root;
        loop {
            let slots = match node {
                Node::Part { slots, .. } => slots,
                Node::List { items, .. } => {
                    let key = steps.next().ok_or("a leaf's path ends at a list")?;
                    let item = items.iter_mut().find(|(k, _)| k.as_deref() == Some(key));
                    &mut item.ok_or_else(|| format!("no item {key}"))?.1
                }
                Node::Text(slot) => {
                    if let Some(step) = steps.next() {
                        return Err(format!("a leaf's path goes past a text slot at {step}"));
                    }
                    *slot = text.to_owned();
                    return Ok(());
                }
            };
            let step = steps.next().ok_or("a leaf's path ends at a part")?;
            let i: usize = step.parse().map_err(|_| format!("slot index {step}"))?;
            node = slots.get_mut(i).ok_or_else(|| format!("no slot {i}"))?;
        }
    }

    /// The page's HTML.
    pub(crate) fn html(&self) -> Result<String, Broken> {
        let mut html = String::new();
        if let Some(root) = &self.root {
            self.render(root, &mut html)?;
        }
        Ok(html)
    }

    fn parts(&self, fingerprint: &str) -> Result<&[String], Broken> {
        self.statics.get(fingerprint).map(Vec::as_slice).ok_or_else(|| format!("no statics for {fingerprint}"))
    }

    fn rendered(&mut self, json: &Value) -> Result<Node, Broken> {
        let object = match json {
            Value::String(text) => return Ok(Node::Text(text.clone())),
            Value::Object(object) => object,
            other => return Err(format!("not a rendering: {other}")),
        };
        let fingerprint = object.get("f").and_then(Value::as_str).ok_or("a rendering without `f`")?.to_owned();
        if let Some(parts) = object.get("s") {
            let parts = serde_json::from_value(parts.clone()).map_err(|e| e.to_string())?;
            self.statics.insert(fingerprint.clone(), parts);
        }
        if object.contains_key("d") {
            let items = self.items(object)?;
            return Ok(Node::List { fingerprint, items });
        }
        let count = self.parts(&fingerprint)?.len().checked_sub(1).ok_or("empty statics")?;
        let slots = (0..count)
            .map(|i| self.rendered(object.get(&i.to_string()).ok_or_else(|| format!("slot {i} missing"))?))
            .collect::<Result<_, _>>()?;
        Ok(Node::Part { fingerprint, slots })
    }

    fn items(&mut self, object: &Map<String, Value>) -> Result<Vec<ListItem>, Broken> {
        let dynamics = object.get("d").and_then(Value::as_array).ok_or("`d` is not a list")?;
        let keys = object.get("k").and_then(Value::as_array);
        let mut items = Vec::with_capacity(dynamics.len());
        for (i, slots) in dynamics.iter().enumerate() {
            let key = keys.and_then(|keys| keys.get(i)).and_then(Value::as_str).map(str::to_owned);
            items.push((key, self.slot_list(slots)?));
        }
        Ok(items)
    }

    fn slot_list(&mut self, slots: &Value) -> Result<Vec<Node>, Broken> {
        let slots = slots.as_array().ok_or("an item is not a list of slots")?;
        slots.iter().map(|slot| self.rendered(slot)).collect()
    }

    fn patch(&mut self, node: &mut Node, json: &Value) -> Result<(), Broken> {
        if json.is_string() || json.get("f").is_some() {
            *node = self.rendered(json)?;
            return Ok(());
        }
        let object = json.as_object().ok_or("a diff is a string or an object")?;
        match node {
            Node::Text(_) => Err("a text slot takes a string".into()),
            Node::Part { slots, .. } => self.patch_slots(slots, object),
            Node::List { items, .. } if object.contains_key("d") => {
                *items = self.items(object)?.into_iter().map(|(_, slots)| (None, slots)).collect();
                Ok(())
            }
            Node::List { items, .. } => self.patch_keyed(items, object),
        }
    }

    fn patch_slots(&mut self, slots: &mut [Node], diff: &Map<String, Value>) -> Result<(), Broken> {
        for (index, value) in diff {
            let i: usize = index.parse().map_err(|_| format!("slot index {index}"))?;
            let slot = slots.get_mut(i).ok_or_else(|| format!("no slot {i}"))?;
            self.patch(slot, value)?;
        }
        Ok(())
    }

    fn patch_keyed(&mut self, items: &mut Vec<ListItem>, diff: &Map<String, Value>) -> Result<(), Broken> {
        let position = |items: &[ListItem], key: &str| {
            items.iter().position(|(k, _)| k.as_deref() == Some(key)).ok_or_else(|| format!("no item {key}"))
        };
        for key in diff.get("r").and_then(Value::as_array).into_iter().flatten() {
            let at = position(items, key.as_str().unwrap_or_default())?;
            items.remove(at);
        }
        for op in diff.get("o").and_then(Value::as_array).into_iter().flatten() {
            let op = op.as_array().ok_or("an op is a list")?;
            let key = op.get(1).and_then(Value::as_str).ok_or("an op's key")?.to_owned();
            let item = match op.first().and_then(Value::as_str) {
                Some("i") => (Some(key), self.slot_list(op.get(3).ok_or("an insert's slots")?)?),
                Some("m") => items.remove(position(items, &key)?),
                _ => return Err(format!("unknown op {op:?}")),
            };
            let at = match op.get(2).and_then(Value::as_str) {
                None => 0,
                Some(after) => position(items, after)? + 1,
            };
            items.insert(at, item);
        }
        for (key, value) in diff.get("u").and_then(Value::as_object).into_iter().flatten() {
            let at = position(items, key)?;
            let object = value.as_object().ok_or("an item's diff is an object")?;
            self.patch_slots(&mut items[at].1, object)?;
        }
        Ok(())
    }

    fn render(&self, node: &Node, html: &mut String) -> Result<(), Broken> {
        match node {
            Node::Text(text) => html.push_str(text),
            Node::Part { fingerprint, slots } => self.render_slots(self.parts(fingerprint)?, slots, html)?,
            Node::List { fingerprint, items } => {
                let parts = self.parts(fingerprint)?;
                for (_, slots) in items {
                    self.render_slots(parts, slots, html)?;
                }
            }
        }
        Ok(())
    }

    fn render_slots(&self, parts: &[String], slots: &[Node], html: &mut String) -> Result<(), Broken> {
        html.push_str(parts.first().map_or("", String::as_str));
        for (slot, part) in slots.iter().zip(parts.iter().skip(1)) {
            self.render(slot, html)?;
            html.push_str(part);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Replica;
    use crate::live::{Live, Tracker};

    fn rows(rows: &[(u32, &str)]) -> Live<()> {
        crate::live_html! { ul { @for (id, name) in rows; key = id { li { (name) } } } }
    }

    #[test]
    fn a_leaf_text_with_equals_newline_and_quotes_round_trips() {
        let (mut tracker, mount) = Tracker::mount(rows(&[(1, "a"), (7, "b")]).into_part());
        let mut page = Replica::default();
        page.apply(mount.as_str().unwrap()).unwrap();
        for text in ["x=y.z", "two\nlines\n", "\"quoted\" 'too'", "", "{not json}"] {
            let live = rows(&[(1, "a"), (7, text)]);
            let html = live.to_html();
            let diff = tracker.update(live.into_part());
            assert!(diff.is_leaf(), "{diff:?}");
            page.apply(diff.as_str().unwrap()).unwrap();
            assert_eq!(page.html().unwrap(), html, "{diff:?}");
        }
    }

    #[test]
    fn a_leaf_to_no_such_slot_or_item_is_refused() {
        let (_, mount) = Tracker::mount(rows(&[(1, "a")]).into_part());
        let mut page = Replica::default();
        page.apply(mount.as_str().unwrap()).unwrap();
        for message in ["0.2.0=x", "0.1.5=x", "3=x", "0=x", "0.1.0.0=x", "0.1"] {
            assert!(page.apply(message).is_err(), "{message}");
        }
    }
}
