//! The state every view shares: the count, the table's rows and the chat room, each behind a
//! lock and each with a tokio broadcast channel that the views subscribe to. A trigger changes
//! the state under its lock and publishes the change; a view that fell behind the channel
//! (`Lagged`) reads the whole state again instead of the changes it missed.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

/// Rows of the table page.
pub const ROWS: u32 = 100;
/// Lines of the chat room a page shows.
pub const ROOM_LINES: usize = 50;
/// Changes a slow view may fall behind before it has to read the whole state again.
const BACKLOG: usize = 1024;

/// One row of the table page.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: u32,
    pub name: String,
    pub score: u64,
    pub team: String,
}

/// One line of the chat room, numbered so that each view can key its list by it.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub seq: u64,
    pub text: Arc<str>,
}

/// Everything the three pages share, handed to every view as its root context.
pub struct Shared {
    count: AtomicU64,
    counts: broadcast::Sender<u64>,
    table: Mutex<Table>,
    scores: broadcast::Sender<(u32, u64)>,
    room: Mutex<Room>,
    lines: broadcast::Sender<Line>,
}

struct Table {
    rows: Vec<Row>,
    changes: u64,
}

struct Room {
    lines: VecDeque<Line>,
    said: u64,
}

impl Shared {
    /// The initial state: count 0, rows 1..=100 with score = id, an empty room.
    pub fn new() -> Arc<Self> {
        let rows = (1..=ROWS)
            .map(|id| Row { id, name: format!("player-{id}"), score: u64::from(id), team: format!("team-{}", id % 7) })
            .collect();
        Arc::new(Shared {
            count: AtomicU64::new(0),
            counts: broadcast::channel(BACKLOG).0,
            table: Mutex::new(Table { rows, changes: 0 }),
            scores: broadcast::channel(BACKLOG).0,
            room: Mutex::new(Room { lines: VecDeque::with_capacity(ROOM_LINES), said: 0 }),
            lines: broadcast::channel(BACKLOG).0,
        })
    }

    /// The shared count now.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// Adds one to the count and publishes the new count; returns it.
    pub fn bump(&self) -> u64 {
        let now = self.count.fetch_add(1, Ordering::AcqRel) + 1;
        let _ = self.counts.send(now);
        now
    }

    /// A receiver of every new count.
    pub fn counts(&self) -> broadcast::Receiver<u64> {
        self.counts.subscribe()
    }

    /// A copy of the rows now, by id.
    pub fn rows(&self) -> Vec<Row> {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).rows.clone()
    }

    /// The n-th change (n from 0): one more point for row `(n % 100) + 1`; publishes
    /// `(id, new score)` and returns it.
    pub fn change(&self) -> (u32, u64) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let index = (table.changes % u64::from(ROWS)) as usize;
        table.changes += 1;
        let row = &mut table.rows[index];
        row.score += 1;
        let change = (row.id, row.score);
        // Published under the lock, so that every view sees the changes in the table's order.
        let _ = self.scores.send(change);
        change
    }

    /// A receiver of every `(id, new score)`.
    pub fn scores(&self) -> broadcast::Receiver<(u32, u64)> {
        self.scores.subscribe()
    }

    /// The room's last lines, oldest first.
    pub fn lines(&self) -> VecDeque<Line> {
        self.room.lock().unwrap_or_else(|e| e.into_inner()).lines.clone()
    }

    /// Appends a line to the room and publishes it.
    pub fn say(&self, text: &str) -> Line {
        let mut room = self.room.lock().unwrap_or_else(|e| e.into_inner());
        let line = Line { seq: room.said, text: text.into() };
        room.said += 1;
        if room.lines.len() == ROOM_LINES {
            room.lines.pop_front();
        }
        room.lines.push_back(line.clone());
        let _ = self.lines.send(line.clone());
        line
    }

    /// A receiver of every new line.
    pub fn said(&self) -> broadcast::Receiver<Line> {
        self.lines.subscribe()
    }
}
