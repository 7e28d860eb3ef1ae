//! Two versions of one schema compared, in the direction the data flows: what a
//! server accepts may widen but not narrow; what it sends may narrow but not widen.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::change::{Change, ChangeKind};

/// Which way the schema's data flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Direction {
    /// The client sends it: accepting less breaks old clients.
    Input,
    /// The server sends it: sending more (or less of what was promised) breaks them.
    Output,
}

impl Direction {
    /// The kind of a change that lets through more values than before.
    fn widened(self) -> ChangeKind {
        match self {
            Direction::Input => ChangeKind::Additive,
            Direction::Output => ChangeKind::Breaking,
        }
    }

    /// The kind of a change that lets through fewer values than before.
    fn narrowed(self) -> ChangeKind {
        match self {
            Direction::Input => ChangeKind::Breaking,
            Direction::Output => ChangeKind::Additive,
        }
    }
}

/// Lower bounds: a larger value is narrower.
const LOWER_BOUNDS: &[&str] = &["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"];
/// Upper bounds: a smaller value is narrower.
const UPPER_BOUNDS: &[&str] = &["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"];

/// The comparison of two documents' schemas, collecting changes.
pub(crate) struct SchemaDiff<'d> {
    old_doc: &'d Value,
    new_doc: &'d Value,
    /// `$ref` pairs already compared within one body: recursive types end here.
    seen: HashSet<(String, String, Direction)>,
    changes: Vec<Change>,
}

impl<'d> SchemaDiff<'d> {
    pub(crate) fn new(old_doc: &'d Value, new_doc: &'d Value) -> Self {
        SchemaDiff { old_doc, new_doc, seen: HashSet::new(), changes: Vec::new() }
    }

    pub(crate) fn push(&mut self, kind: ChangeKind, at: &str, what: String) {
        self.changes.push(Change { kind, at: at.trim_end().to_owned(), what });
    }

    pub(crate) fn into_changes(self) -> Vec<Change> {
        self.changes
    }

    /// Compares `old` (of the old document) with `new` (of the new one), the schema
    /// of a body or parameter at `at`.
    pub(crate) fn schema(&mut self, at: &str, direction: Direction, old: &Value, new: &Value) {
        // Each body reports its own changes, even of a type another body shares.
        self.seen.clear();
        self.at_path(&format!("{at} "), direction, old, new);
    }

    /// Compares the schemas at `at`: the body's place, a space, and the field path
    /// within (`.author`, `[]`), which the change's place ends with.
    fn at_path(&mut self, at: &str, direction: Direction, old: &Value, new: &Value) {
        let (old_ref, old) = resolve(self.old_doc, old);
        let (new_ref, new) = resolve(self.new_doc, new);
        if let (Some(o), Some(n)) = (old_ref, new_ref) {
            if !self.seen.insert((o.to_owned(), n.to_owned(), direction)) {
                return;
            }
        }
        if !self.types(at, direction, old, new) {
            return;
        }
        self.values(at, direction, old, new);
        self.bounds(at, direction, old, new);
        self.properties(at, direction, old, new);
        if let (Some(o), Some(n)) = (old.get("items"), new.get("items")) {
            self.at_path(&format!("{at}[]"), direction, o, n);
        }
        if let (Some(o @ Value::Object(_)), Some(n @ Value::Object(_))) =
            (old.get("additionalProperties"), new.get("additionalProperties"))
        {
            self.at_path(&format!("{at}{{*}}"), direction, o, n);
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            self.variants(at, direction, key, old, new);
        }
    }

    /// `type`: `false` when it changed outright, so comparing further says nothing.
    fn types(&mut self, at: &str, direction: Direction, old: &Value, new: &Value) -> bool {
        let (Some(o), Some(n)) = (type_set(old), type_set(new)) else {
            match (old.get("type"), new.get("type")) {
                (Some(o), None) => self.push(direction.widened(), at, format!("the type {o} is no longer checked")),
                (None, Some(n)) => self.push(direction.narrowed(), at, format!("the type is now {n}")),
                _ => {}
            }
            return true;
        };
        let removed = o.iter().any(|t| !n.contains(t));
        let added = n.iter().any(|t| !o.contains(t));
        let what = format!("type changed from {} to {}", o.join(" or "), n.join(" or "));
        match (removed, added) {
            (true, true) => {
                self.push(ChangeKind::Breaking, at, what);
                return false;
            }
            (true, false) => self.push(direction.narrowed(), at, what),
            (false, true) => self.push(direction.widened(), at, what),
            (false, false) => {}
        }
        true
    }

    /// `enum`, `const` and `format`.
    fn values(&mut self, at: &str, direction: Direction, old: &Value, new: &Value) {
        match (old.get("enum").and_then(Value::as_array), new.get("enum").and_then(Value::as_array)) {
            (Some(o), Some(n)) => {
                for gone in o.iter().filter(|v| !n.contains(v)) {
                    self.push(direction.narrowed(), at, format!("the value {gone} is no longer in the enum"));
                }
                for more in n.iter().filter(|v| !o.contains(v)) {
                    self.push(direction.widened(), at, format!("the value {more} is new in the enum"));
                }
            }
            (None, Some(_)) => self.push(direction.narrowed(), at, "the values are now an enum".into()),
            (Some(_), None) => self.push(direction.widened(), at, "the values are no longer an enum".into()),
            (None, None) => {}
        }
        for key in ["const", "format", "pattern"] {
            let (o, n) = (old.get(key), new.get(key));
            if o != n {
                let show = |v: Option<&Value>| v.map_or_else(|| "none".to_owned(), Value::to_string);
                self.push(ChangeKind::Breaking, at, format!("`{key}` changed from {} to {}", show(o), show(n)));
            }
        }
    }

    /// Numeric, length and count bounds.
    fn bounds(&mut self, at: &str, direction: Direction, old: &Value, new: &Value) {
        let bound = |v: &Value, key: &str| v.get(key).and_then(Value::as_f64);
        for (keys, narrower) in [(LOWER_BOUNDS, f64::gt as fn(&f64, &f64) -> bool), (UPPER_BOUNDS, f64::lt)] {
            for key in keys {
                let (o, n) = (bound(old, key), bound(new, key));
                let kind = match (o, n) {
                    (None, Some(_)) => direction.narrowed(),
                    (Some(_), None) => direction.widened(),
                    (Some(o), Some(n)) if narrower(&n, &o) => direction.narrowed(),
                    (Some(o), Some(n)) if o != n => direction.widened(),
                    _ => continue,
                };
                let show = |v: Option<f64>| v.map_or_else(|| "none".to_owned(), |v| v.to_string());
                self.push(kind, at, format!("`{key}` changed from {} to {}", show(o), show(n)));
            }
        }
    }

    /// `properties` and `required`.
    fn properties(&mut self, at: &str, direction: Direction, old: &Value, new: &Value) {
        let empty = Map::new();
        let old_props = old.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let new_props = new.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let (old_required, new_required) = (required(old), required(new));
        for (name, old_p) in old_props {
            let here = format!("{at}.{name}");
            let Some(new_p) = new_props.get(name) else {
                self.push(ChangeKind::Breaking, &here, "the field is removed".into());
                continue;
            };
            match (old_required.contains(&name.as_str()), new_required.contains(&name.as_str())) {
                (false, true) => self.push(direction.narrowed(), &here, "the field is now required".into()),
                (true, false) => self.push(direction.widened(), &here, "the field is now optional".into()),
                _ => {}
            }
            self.at_path(&here, direction, old_p, new_p);
        }
        for name in new_props.keys().filter(|n| !old_props.contains_key(*n)) {
            let here = format!("{at}.{name}");
            let (kind, what) = match direction {
                Direction::Input if new_required.contains(&name.as_str()) => {
                    (ChangeKind::Breaking, "a new required field")
                }
                Direction::Input => (ChangeKind::Additive, "a new optional field"),
                Direction::Output => (ChangeKind::Additive, "a new field"),
            };
            self.push(kind, &here, what.into());
        }
    }

    /// `oneOf`, `anyOf`, `allOf`: compared by position.
    fn variants(&mut self, at: &str, direction: Direction, key: &str, old: &Value, new: &Value) {
        let list = |v: &Value| v.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
        let (o, n) = (list(old), list(new));
        for (i, (o, n)) in o.iter().zip(&n).enumerate() {
            self.at_path(&format!("{at}({key} {i})"), direction, o, n);
        }
        // `allOf` adds constraints, the others alternatives.
        let (more, fewer) = if key == "allOf" {
            (direction.narrowed(), direction.widened())
        } else {
            (direction.widened(), direction.narrowed())
        };
        if n.len() > o.len() {
            self.push(more, at, format!("`{key}` has {} schemas, not {}", n.len(), o.len()));
        } else if n.len() < o.len() {
            self.push(fewer, at, format!("`{key}` has {} schemas, not {}", n.len(), o.len()));
        }
    }
}

/// The schema a `$ref` names in `doc` (and the reference), or the schema itself.
fn resolve<'v>(doc: &'v Value, schema: &'v Value) -> (Option<&'v str>, &'v Value) {
    let mut current = schema;
    let mut reference = None;
    // A chain of references ends; a loop of them is cut after a few steps.
    for _ in 0..8 {
        let Some(r) = current.get("$ref").and_then(Value::as_str) else { break };
        let Some(target) = r.strip_prefix('#').and_then(|pointer| doc.pointer(pointer)) else { break };
        reference = Some(r);
        current = target;
    }
    (reference, current)
}

/// The `type` keyword as a sorted list, `None` when absent.
fn type_set(schema: &Value) -> Option<Vec<&str>> {
    let mut types: Vec<&str> = match schema.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    types.sort_unstable();
    Some(types)
}

fn required(schema: &Value) -> Vec<&str> {
    let list = schema.get("required").and_then(Value::as_array);
    list.map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}
