//! One topic on one worker: a window of its last messages, read by every subscriber
//! of the worker through a cursor of its own, and the wakers of those waiting.

use std::cell::OnceCell;
use std::collections::VecDeque;
use std::task::Waker;

use kiln_http::Bytes;

use super::{Lagged, Message};
use crate::realtime::Event;

/// An entry of the window: a message, or a gap (messages may have been lost there).
pub(super) type Entry = Option<Message>;

/// An entry as the window keeps it, with its Server-Sent Event rendered on first
/// read: a publish to ten thousand subscribers renders it once, and each of them
/// sends the same bytes.
struct Kept {
    entry: Entry,
    event: OnceCell<Bytes>,
}

pub(super) struct Topic {
    /// The last messages, oldest first; `window` at most.
    ring: VecDeque<Kept>,
    /// The worker's sequence number of `ring[0]`: entries are numbered as they come,
    /// so a cursor is a sequence number and survives the ring's turning.
    first_seq: u64,
    /// Each waiting subscriber's waker, by its slot; `free` lists unused slots.
    waiters: Vec<Option<Waker>>,
    free: Vec<usize>,
}

impl Topic {
    pub(super) fn new() -> Topic {
        Topic { ring: VecDeque::new(), first_seq: 0, waiters: Vec::new(), free: Vec::new() }
    }

    /// The sequence number the next entry will get.
    pub(super) fn next_seq(&self) -> u64 {
        self.first_seq + self.ring.len() as u64
    }

    /// Adds an entry, dropping the oldest beyond `window`, and wakes every waiter.
    pub(super) fn push(&mut self, entry: Entry, window: usize) {
        if self.ring.len() >= window {
            self.ring.pop_front();
            self.first_seq += 1;
        }
        self.ring.push_back(Kept { entry, event: OnceCell::new() });
        for waker in self.waiters.iter_mut().filter_map(Option::take) {
            waker.wake();
        }
    }

    /// The entry at `cursor`, moving it on; `None` when the subscriber has read all.
    /// A cursor the window has passed by skips to the oldest entry kept, and says so.
    pub(super) fn read(&self, cursor: &mut u64) -> Option<Result<Message, Lagged>> {
        Some(match self.next(cursor)? {
            Ok(kept) => kept.entry.clone().ok_or(Lagged(0)),
            Err(lagged) => Err(lagged),
        })
    }

    /// [`read`](Self::read) as the Server-Sent Event [`BusEvents`](super::BusEvents)
    /// sends: a message's is rendered once and shared.
    pub(super) fn read_event(&self, cursor: &mut u64) -> Option<Bytes> {
        Some(match self.next(cursor)? {
            Ok(Kept { entry: Some(message), event }) => event.get_or_init(|| message.to_event().into_bytes()).clone(),
            Ok(Kept { entry: None, .. }) => lagged_event(Lagged(0)),
            Err(lagged) => lagged_event(lagged),
        })
    }

    fn next(&self, cursor: &mut u64) -> Option<Result<&Kept, Lagged>> {
        if *cursor < self.first_seq {
            let missed = self.first_seq - *cursor;
            *cursor = self.first_seq;
            super::LAGGED_MESSAGES.fetch_add(missed, std::sync::atomic::Ordering::Relaxed);
            return Some(Err(Lagged(missed)));
        }
        let kept = self.ring.get(usize::try_from(*cursor - self.first_seq).ok()?)?;
        *cursor += 1;
        Some(Ok(kept))
    }

    /// Where a subscriber resuming after message `after` starts, and whether it
    /// must be told it lagged: right after that message if the window still holds
    /// it; else at the oldest entry kept, lagged if entries were dropped since (the
    /// message it saw may have been among them).
    pub(super) fn resume_at(&self, after: u64) -> (u64, bool) {
        let seen = self.ring.iter().rposition(|k| k.entry.as_ref().is_some_and(|m| m.id() <= after));
        match seen {
            Some(at) => (self.first_seq + at as u64 + 1, false),
            None => (self.first_seq, self.first_seq > 0),
        }
    }

    pub(super) fn wait(&mut self, slot: &mut Option<usize>, waker: &Waker) {
        let at = *slot.get_or_insert_with(|| {
            self.free.pop().unwrap_or_else(|| {
                self.waiters.push(None);
                self.waiters.len() - 1
            })
        });
        match &mut self.waiters[at] {
            Some(w) if w.will_wake(waker) => {}
            entry => *entry = Some(waker.clone()),
        }
    }

    pub(super) fn leave(&mut self, slot: usize) {
        self.waiters[slot] = None;
        self.free.push(slot);
    }
}

/// A lag as [`BusEvents`](super::BusEvents) tells it: an event of type `lagged` whose
/// data is the number missed (0: unknown).
pub(super) fn lagged_event(Lagged(n): Lagged) -> Bytes {
    Event::new().event("lagged").data(itoa::Buffer::new().format(n)).into_bytes()
}
