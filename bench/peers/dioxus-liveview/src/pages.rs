//! The three pages as dioxus components. Each reads the shared state from its root context
//! into its own signals and keeps them current from the state's broadcast channels in a
//! `use_future` (the dioxus way to feed a component from outside); the table's sort order and
//! name filter are plain component signals, changed by the view's own events.

use std::collections::VecDeque;
use std::sync::Arc;

use dioxus::prelude::*;
use tokio::sync::broadcast::error::RecvError;

use crate::state::{Line, Row, Shared, ROOM_LINES};

/// Longest chat line, in bytes of UTF-8.
pub const MAX_LINE: usize = 200;

fn shared() -> Arc<Shared> {
    use_context::<Arc<Shared>>()
}

/// `/bench/live/counter`: the shared count, and a button that bumps it.
pub fn counter() -> Element {
    let shared = shared();
    let mut count = use_signal(|| shared.count());
    let feed = shared.clone();
    use_future(move || {
        let shared = feed.clone();
        async move {
            let mut counts = shared.counts();
            // A bump between the first render and this subscription is not lost.
            let now = shared.count();
            if *count.peek() != now {
                count.set(now);
            }
            loop {
                match counts.recv().await {
                    Ok(n) => count.set(n),
                    Err(RecvError::Lagged(_)) => count.set(shared.count()),
                    Err(RecvError::Closed) => return,
                }
            }
        }
    });
    rsx! {
        main {
            h1 { "Counter" }
            p { "Count: " span { id: "count", "{count}" } }
            button { onclick: move |_| { shared.bump(); }, "+1" }
        }
    }
}

/// A column of the table, the key a reader sorts by.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Column {
    Id,
    Name,
    Score,
    Team,
}

impl Column {
    const ALL: [Column; 4] = [Column::Id, Column::Name, Column::Score, Column::Team];

    fn label(self) -> &'static str {
        match self {
            Column::Id => "id",
            Column::Name => "name",
            Column::Score => "score",
            Column::Team => "team",
        }
    }
}

/// One reader's view of the table: the column it sorts by, which way, and its name filter.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Order {
    column: Column,
    descending: bool,
}

impl Order {
    /// Sorting by `column`: a new column sorts up, the same one again flips the direction.
    fn by(self, column: Column) -> Order {
        Order { column, descending: self.column == column && !self.descending }
    }
}

fn shown<'a>(rows: &'a [Row], order: Order, filter: &str) -> Vec<&'a Row> {
    let mut shown: Vec<&Row> = rows.iter().filter(|row| row.name.contains(filter)).collect();
    shown.sort_by(|a, b| {
        let by = match order.column {
            Column::Id => a.id.cmp(&b.id),
            Column::Name => a.name.cmp(&b.name),
            Column::Score => a.score.cmp(&b.score).then(a.id.cmp(&b.id)),
            Column::Team => a.team.cmp(&b.team).then(a.id.cmp(&b.id)),
        };
        if order.descending {
            by.reverse()
        } else {
            by
        }
    });
    shown
}

/// `/bench/live/table`: 100 rows, each reader sorting and filtering for themselves.
pub fn table() -> Element {
    let shared = shared();
    let mut rows = use_signal(|| shared.rows());
    let mut order = use_signal(|| Order { column: Column::Id, descending: false });
    let mut filter = use_signal(String::new);
    use_future(move || {
        let shared = shared.clone();
        async move {
            let mut scores = shared.scores();
            let now = shared.rows();
            if *rows.peek() != now {
                rows.set(now);
            }
            loop {
                match scores.recv().await {
                    Ok((id, score)) => {
                        if let Some(row) = rows.write().iter_mut().find(|row| row.id == id) {
                            row.score = score;
                        }
                    }
                    Err(RecvError::Lagged(_)) => rows.set(shared.rows()),
                    Err(RecvError::Closed) => return,
                }
            }
        }
    });
    let all = rows.read();
    let filter_now = filter.read();
    let visible = shown(&all, order(), &filter_now);
    rsx! {
        main {
            h1 { "Table" }
            label {
                "Filter by name "
                input {
                    r#type: "search",
                    name: "filter",
                    value: "{filter_now}",
                    oninput: move |e| filter.set(e.value()),
                }
            }
            table {
                thead {
                    tr {
                        for column in Column::ALL {
                            th {
                                button { onclick: move |_| order.set(order().by(column)), "{column.label()}" }
                            }
                        }
                    }
                }
                tbody {
                    for row in visible {
                        tr { key: "{row.id}",
                            td { "{row.id}" }
                            td { "{row.name}" }
                            td { "{row.score}" }
                            td { "{row.team}" }
                        }
                    }
                }
            }
        }
    }
}

/// `/bench/live/chat`: the room's last 50 lines, and a box to say one.
pub fn chat() -> Element {
    let shared = shared();
    let mut lines = use_signal(|| shared.lines());
    let mut draft = use_signal(String::new);
    let feed = shared.clone();
    use_future(move || {
        let shared = feed.clone();
        async move {
            let mut said = shared.said();
            let now = shared.lines();
            if *lines.peek() != now {
                lines.set(now);
            }
            loop {
                match said.recv().await {
                    Ok(line) => append(&mut lines.write(), line),
                    Err(RecvError::Lagged(_)) => lines.set(shared.lines()),
                    Err(RecvError::Closed) => return,
                }
            }
        }
    });
    rsx! {
        main {
            h1 { "Chat" }
            ol { id: "chat",
                for line in lines.read().iter() {
                    li { key: "{line.seq}", "{line.text}" }
                }
            }
            label {
                "Say "
                input { name: "line", maxlength: "{MAX_LINE}", value: "{draft}", oninput: move |e| draft.set(e.value()) }
            }
            button {
                onclick: move |_| {
                    let text = draft.take();
                    if !text.is_empty() && text.len() <= MAX_LINE {
                        shared.say(&text);
                    }
                },
                "Send"
            }
        }
    }
}

fn append(lines: &mut VecDeque<Line>, line: Line) {
    if lines.len() == ROOM_LINES {
        lines.pop_front();
    }
    lines.push_back(line);
}
