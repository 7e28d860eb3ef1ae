//! The table page: 100 players shared by every open view, each reader sorting (by any
//! column) and filtering (by name) for themselves, as the view's own events. `POST
//! /bench/live/table/change` adds one to the score of row `(n % 100) + 1` (n: the
//! trigger's sequence number from 0) and publishes `id score version`; each view sets
//! that row, so its page is sent that row's changed cell, the rows being keyed by id.
//! A view's render key is the scores' version with its reader's sort and filter, so the
//! views of one reader's choice share one rendering per change.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Mutex;

use kiln::live::{HandleInfo, Live, LiveSocket, LiveView};
use kiln::markup::{Document, Flow, Fragment};
use kiln::realtime::{LocalBus, Message};
use kiln::{Rejection, RequestContext, Route, State, live_html};
use serde::{Deserialize, Serialize};

use super::BenchState;

/// Rows in the table.
const ROWS: usize = 100;
/// The bus topic of score changes: `id score version` (the version: changes made so far).
const TOPIC: &str = "bench/live/table";

/// The scores every view starts from, and how many changes were made.
static SCORES: Mutex<Scores> = Mutex::new(Scores::new());

/// The page.
#[derive(Route)]
#[route("/bench/live/table")]
pub(crate) struct TablePage;

/// The trigger: one row's score plus one.
#[derive(Route)]
#[route(POST, "/bench/live/table/change")]
pub(crate) struct Change;

/// A column a reader sorts by.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Column {
    Id,
    Name,
    Score,
    Team,
}

/// The filter form's field.
#[derive(Deserialize)]
pub(crate) struct Filter {
    pub(crate) q: String,
}

/// What the page sends.
#[derive(Serialize, Deserialize)]
pub(crate) enum Event {
    Sort(Column),
    #[serde(skip_serializing)]
    Filter(Filter),
}

/// Every row's score (row `id` at `id - 1`; ids are 1..=100) and the changes so far.
#[derive(Clone)]
pub(crate) struct Scores {
    scores: [u32; ROWS],
    changes: u64,
}

impl Scores {
    /// Each row's score its id.
    pub(crate) const fn new() -> Scores {
        let mut scores = [0; ROWS];
        let mut i = 0;
        while i < ROWS {
            scores[i] = i as u32 + 1;
            i += 1;
        }
        Scores { scores, changes: 0 }
    }

    /// The next change: the row it names and that row's new score.
    pub(crate) fn change(&mut self) -> (u32, u32) {
        let row = (self.changes % ROWS as u64) as usize;
        self.changes += 1;
        self.scores[row] += 1;
        (row as u32 + 1, self.scores[row])
    }

    fn set(&mut self, id: u32, score: u32) {
        if let Some(slot) = id.checked_sub(1).and_then(|i| self.scores.get_mut(i as usize)) {
            *slot = score;
        }
    }
}

/// One reader's table: the shared scores as this page last heard them, in this
/// reader's order and filter.
pub(crate) struct Table {
    scores: Scores,
    sort: Column,
    filter: String,
}

/// One row as rendered.
struct Row {
    id: u32,
    score: u32,
}

impl Row {
    fn name(&self) -> String {
        format!("player-{}", self.id)
    }

    fn team(&self) -> u32 {
        self.id % 7
    }
}

impl Table {
    /// A reader who has not sorted or filtered: rows by id.
    pub(crate) fn new(scores: Scores) -> Table {
        Table { scores, sort: Column::Id, filter: String::new() }
    }

    /// Takes a change heard on the bus.
    pub(crate) fn set(&mut self, id: u32, score: u32) {
        self.scores.set(id, score);
    }

    /// The rows this reader sees, in this reader's order (ties by id).
    fn visible(&self) -> Vec<Row> {
        let rows = (1..).zip(self.scores.scores).map(|(id, score)| Row { id, score });
        let mut rows: Vec<Row> = rows.filter(|r| self.filter.is_empty() || r.name().contains(&self.filter)).collect();
        match self.sort {
            Column::Id => {}
            Column::Name => rows.sort_by_cached_key(Row::name),
            Column::Score => rows.sort_by_key(|r| (r.score, r.id)),
            Column::Team => rows.sort_by_key(|r| (r.team(), r.id)),
        }
        rows
    }

    /// The view's markup, and the floor's.
    pub(crate) fn render(&self) -> Live<Event> {
        live_html! {
            form on:input=(Event::Filter) {
                input type="search" name="q" placeholder="Filter by name" value=(self.filter);
            }
            table {
                thead {
                    tr {
                        th { button type="button" on:click=(Event::Sort(Column::Id)) { "Id" } }
                        th { button type="button" on:click=(Event::Sort(Column::Name)) { "Name" } }
                        th { button type="button" on:click=(Event::Sort(Column::Score)) { "Score" } }
                        th { button type="button" on:click=(Event::Sort(Column::Team)) { "Team" } }
                    }
                }
                tbody {
                    @for row in self.visible(); key = row.id {
                        tr { td { (row.id) } td { "player-" (row.id) } td { (row.score) } td { "team-" (row.team()) } }
                    }
                }
            }
        }
    }
}

/// One open table.
pub(crate) struct TableView<S> {
    bus: LocalBus,
    table: Table,
    /// A hash of this reader's sort and filter, taken when either changes.
    reader: u64,
    state: PhantomData<fn() -> S>,
}

impl<S> TableView<S> {
    pub(crate) fn new(bus: LocalBus, scores: Scores) -> Self {
        let table = Table::new(scores);
        let reader = reader(&table);
        TableView { bus, table, reader, state: PhantomData }
    }

    /// Takes change `version` of row `id`. A change missed (the subscription lagged, or
    /// it was made between the mount and the subscription) takes the shared scores
    /// again, so that the scores are always those of their version, as the key says.
    pub(crate) fn hear(&mut self, id: u32, score: u32, version: u64) {
        let mine = self.table.scores.changes;
        if version == mine + 1 {
            self.table.set(id, score);
            self.table.scores.changes = version;
        } else if version > mine {
            self.table.scores = current();
        }
    }
}

/// A hash of what a reader chose: the sort and the filter.
fn reader(table: &Table) -> u64 {
    let mut hasher = DefaultHasher::new();
    (table.sort, &table.filter).hash(&mut hasher);
    hasher.finish()
}

impl<S: BenchState> LiveView for TableView<S> {
    type AppState = S;
    type Route = TablePage;
    type Event = Event;

    async fn mount(_: TablePage, cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
        let bus = cx.state().bus().clone();
        Ok(TableView::new(bus, current()))
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.subscribe::<Message>(self.bus.subscribe(TOPIC));
    }

    fn handle(&mut self, event: Event, _: &mut LiveSocket<Self>) {
        match event {
            Event::Sort(column) => self.table.sort = column,
            Event::Filter(filter) => self.table.filter = filter.q,
        }
        self.reader = reader(&self.table);
    }

    /// The render reads the scores (one version of them) and the reader's choices.
    fn render_key(&self) -> Option<u64> {
        // The reader's hash and the version, mixed so that nearby versions of two
        // readers do not meet (splitmix64's finaliser).
        let mut key = self.reader ^ self.table.scores.changes.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        key = (key ^ (key >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        key = (key ^ (key >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(key ^ (key >> 31))
    }

    fn render(&self) -> Live<Event> {
        self.table.render()
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        super::page("Table", view)
    }
}

impl<S: BenchState> HandleInfo<Message> for TableView<S> {
    fn handle_info(&mut self, message: Message, _: &mut LiveSocket<Self>) {
        if let Some((id, score, version)) = parse(message.payload()) {
            self.hear(id, score, version);
        }
    }
}

/// A change's payload, `id score version`.
fn parse(payload: &str) -> Option<(u32, u32, u64)> {
    let mut parts = payload.split(' ');
    let (id, score, version) = (parts.next()?, parts.next()?, parts.next()?);
    Some((id.parse().ok()?, score.parse().ok()?, version.parse().ok()?))
}

/// The shared scores as they are now.
fn current() -> Scores {
    SCORES.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}

/// Makes the next change and answers it (`id score`) once every local view has been handed it.
pub(crate) async fn change<S: BenchState>(_: Change, State(state): State<S>) -> Result<String, Rejection> {
    let (id, score, version) = {
        let mut scores = SCORES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (id, score) = scores.change();
        (id, score, scores.changes)
    };
    super::publish(state.bus(), TOPIC, &format!("{id} {score} {version}")).await?;
    Ok(format!("{id} {score}\n"))
}
