//! A keyed list's difference: the items removed, inserted and moved (by key), and the
//! changed slots of the items kept. Moves are as few as the order allows: the items
//! that keep their relative order (a longest increasing subsequence of their old
//! positions) stay where they are, and only the others move.

use std::collections::{HashMap, HashSet};

use kiln_html::{Item, Slot};
use serde_json::{Map, Value};

/// What a keyed list's difference asks of the writer of the whole diff: an item's
/// slots as the page gets them, and the changed ones of an item kept. A trait here, so
/// that the list does not reach back into the writer that calls it.
pub(crate) trait SlotWriter {
    /// Every slot of an inserted item.
    fn slots(&mut self, slots: &[Slot]) -> Value;
    /// The slots of a kept item that changed, `None` when none did.
    fn slots_diff(&mut self, old: &[Slot], new: &[Slot]) -> Option<Map<String, Value>>;
}

/// `{"r": [removed keys], "o": [inserts and moves], "u": {key: slot diff}}`, each
/// left out when empty; `None` when a key repeats, which only a whole list can say.
pub(crate) fn keyed_diff(writer: &mut impl SlotWriter, old: &[Item], new: &[Item]) -> Option<Map<String, Value>> {
    let old_at = positions(old)?;
    let new_keys = positions(new)?;
    let removed: Vec<Value> =
        old.iter().filter_map(Item::key).filter(|key| !new_keys.contains_key(key)).map(Value::from).collect();
    let kept: Vec<usize> = new.iter().filter_map(|item| item.key().and_then(|key| old_at.get(key).copied())).collect();
    let stay: HashSet<usize> = longest_increasing(&kept).into_iter().collect();

    let mut ops = Vec::new();
    let mut updates = Map::new();
    let mut after: Option<&str> = None;
    for item in new {
        let key = item.key()?;
        match old_at.get(key) {
            None => ops.push(Value::Array(vec!["i".into(), key.into(), after.into(), writer.slots(item.slots())])),
            Some(&at) => {
                if !stay.contains(&at) {
                    ops.push(Value::Array(vec!["m".into(), key.into(), after.into()]));
                }
                if let Some(diff) = writer.slots_diff(old[at].slots(), item.slots()) {
                    updates.insert(key.to_owned(), Value::Object(diff));
                }
            }
        }
        after = Some(key);
    }
    let mut json = Map::new();
    if !removed.is_empty() {
        json.insert("r".into(), Value::Array(removed));
    }
    if !ops.is_empty() {
        json.insert("o".into(), Value::Array(ops));
    }
    if !updates.is_empty() {
        json.insert("u".into(), Value::Object(updates));
    }
    Some(json)
}

/// Each key's position, or `None` when a key is missing or repeats.
fn positions(items: &[Item]) -> Option<HashMap<&str, usize>> {
    let mut at = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if at.insert(item.key()?, i).is_some() {
            return None;
        }
    }
    Some(at)
}

/// The values of one longest strictly increasing subsequence of `seq` (patience
/// sorting, O(n log n)).
fn longest_increasing(seq: &[usize]) -> Vec<usize> {
    // tails[k]: index in `seq` of the smallest last value of an increasing run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &value) in seq.iter().enumerate() {
        let k = tails.partition_point(|&t| seq[t] < value);
        before[i] = k.checked_sub(1).map(|k| tails[k]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut run = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(i) = at {
        run.push(seq[i]);
        at = before[i];
    }
    run.reverse();
    run
}

#[cfg(test)]
mod tests {
    use super::longest_increasing;

    #[test]
    fn longest_increasing_keeps_the_most_items_in_place() {
        let cases: &[(&[usize], usize)] =
            &[(&[], 0), (&[0, 1, 2], 3), (&[2, 1, 0], 1), (&[3, 1, 0, 2], 2), (&[1, 2, 3, 0], 3), (&[2, 0, 3, 1], 2)];
        for (seq, len) in cases {
            let run = longest_increasing(seq);
            assert_eq!(run.len(), *len, "{seq:?}");
            assert!(run.windows(2).all(|w| w[0] < w[1]), "{seq:?}: {run:?}");
        }
    }
}
