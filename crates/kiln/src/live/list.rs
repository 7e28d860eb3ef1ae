//! A keyed list's difference: the items removed, inserted and moved (by key), and the
//! changed slots of the items kept. Moves are as few as the order allows: the items
//! that keep their relative order (a longest increasing subsequence of their old
//! positions) stay where they are, and only the others move.

use std::collections::HashMap;

use kiln_html::{Item, Slot};

use crate::live::wire;

/// What a keyed list's difference asks of the writer of the whole diff: the text
/// written so far, an item's slots as the page gets them, and the changed ones of an
/// item kept. A trait here, so that the list does not reach back into the writer that
/// calls it.
pub(crate) trait SlotWriter<'p> {
    /// The message's text, to append to.
    fn out(&mut self) -> &mut String;
    /// Writes every slot of an inserted item.
    fn slots(&mut self, slots: &[Slot]);
    /// Writes the slots of the kept item keyed `key` that changed; nothing (false)
    /// when none did.
    fn item_diff(&mut self, key: &'p str, old: &'p [Slot], new: &'p [Slot]) -> bool;
    /// Notes that items were removed, inserted or moved: the diff is no leaf message.
    fn reshaped(&mut self);
}

/// Writes `{"r": [removed keys], "o": [inserts and moves], "u": {key: slot diff}}`,
/// each left out when empty, and nothing (`Some(false)`) when all are; `None` (and
/// nothing written) when a key is missing or repeats, which only a whole list can say.
pub(crate) fn keyed_diff<'p>(writer: &mut impl SlotWriter<'p>, old: &'p [Item], new: &'p [Item]) -> Option<bool> {
    let old_at = positions(old)?;
    let new_keys = positions(new)?;
    let kept: Vec<usize> = new.iter().filter_map(|item| item.key().and_then(|key| old_at.get(key).copied())).collect();
    let mut stay = vec![false; old.len()];
    for at in longest_increasing(&kept) {
        stay[at] = true;
    }

    let start = writer.out().len();
    writer.out().push('{');
    let mut sections = 0;
    let mut removed = old.iter().filter_map(Item::key).filter(|key| !new_keys.contains_key(key)).peekable();
    if removed.peek().is_some() {
        let out = writer.out();
        out.push_str("\"r\":[");
        for (i, key) in removed.enumerate() {
            if i > 0 {
                out.push(',');
            }
            wire::string(out, key);
        }
        out.push(']');
        sections += 1;
    }

    // Inserts and moves, in the new order, each after the item before it.
    let mut ops = 0;
    let mut after: Option<&str> = None;
    for item in new {
        let key = item.key()?;
        let at = old_at.get(key);
        if at.is_none_or(|&at| !stay[at]) {
            let out = writer.out();
            out.push_str(match (ops, sections) {
                (0, 0) => "\"o\":[",
                (0, _) => ",\"o\":[",
                _ => ",",
            });
            out.push_str(if at.is_none() { "[\"i\"," } else { "[\"m\"," });
            wire::string(out, key);
            out.push(',');
            match after {
                Some(after) => wire::string(out, after),
                None => out.push_str("null"),
            }
            if at.is_none() {
                out.push(',');
                writer.slots(item.slots());
            }
            writer.out().push(']');
            ops += 1;
        }
        after = Some(key);
    }
    if ops > 0 {
        writer.out().push(']');
        sections += 1;
    }
    if sections > 0 {
        writer.reshaped();
    }

    // The changed slots of the items kept.
    let mut updates = 0;
    for item in new {
        let key = item.key()?;
        let Some(&at) = old_at.get(key) else { continue };
        let mark = writer.out().len();
        let out = writer.out();
        out.push_str(match (updates, sections) {
            (0, 0) => "\"u\":{",
            (0, _) => ",\"u\":{",
            _ => ",",
        });
        wire::string(out, key);
        out.push(':');
        if writer.item_diff(key, old[at].slots(), item.slots()) {
            updates += 1;
        } else {
            writer.out().truncate(mark);
        }
    }
    if updates > 0 {
        writer.out().push('}');
        sections += 1;
    }

    if sections == 0 {
        writer.out().truncate(start);
    } else {
        writer.out().push('}');
    }
    Some(sections > 0)
}

/// Keys to positions, hashed with foldhash (seeded per process): SipHash cost most of
/// a list's diff.
type Positions<'a> = HashMap<&'a str, usize, foldhash::fast::RandomState>;

/// Each key's position, or `None` when a key is missing or repeats.
fn positions(items: &[Item]) -> Option<Positions<'_>> {
    let mut at = Positions::with_capacity_and_hasher(items.len(), Default::default());
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
