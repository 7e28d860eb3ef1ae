//! The floor under the live views: kiln's own WebSocket delivery of the bytes a view
//! sends for a change, with no view behind it. A socket of `/bench/live/floor/{page}`
//! is sent, per `POST /bench/live/floor/{page}/{trigger}` (the page's own trigger:
//! `counter/bump`, `table/change`, `chat/say`), one text message holding exactly what
//! an open view of that page that has not sorted or filtered is sent for that change,
//! rendered and diffed once (by the view's own markup and kiln's `Tracker`) and handed
//! to every socket over the bus. No live view can deliver a change for less.

use std::cell::RefCell;
use std::pin::pin;

use futures_util::future::{Either, select};
use kiln::live::Tracker;
use kiln::realtime::Subscription;
use kiln::ws::{WebSocket, WebSocketResponse, WebSocketUpgrade};
use kiln::{Rejection, Route, State, StatusCode};

use super::BenchState;
use super::chat::{self, Room};
use super::counter;
use super::table::{Scores, Table};

thread_local! {
    /// What the floor's pages show, and what their pages were last sent: per worker, as a
    /// `Tracker` is (it shares renderings by `Rc`); the benchmark runs one worker, and its
    /// triggers come in on that worker.
    static FLOOR: RefCell<Floor> = RefCell::new(Floor::new());
}

/// A floor socket.
#[derive(Route)]
#[route("/bench/live/floor/{page}")]
pub(crate) struct FloorSocket {
    page: String,
}

/// A floor trigger.
#[derive(Route)]
#[route(POST, "/bench/live/floor/{page}/{trigger}")]
pub(crate) struct FloorTrigger {
    page: String,
    trigger: String,
}

/// The benchmark's pages.
#[derive(Clone, Copy)]
enum Page {
    Counter,
    Table,
    Chat,
}

impl Page {
    /// The page named in a path, or 404.
    fn named(name: &str) -> Result<Page, Rejection> {
        match name {
            "counter" => Ok(Page::Counter),
            "table" => Ok(Page::Table),
            "chat" => Ok(Page::Chat),
            _ => Err(Rejection::custom(StatusCode::NOT_FOUND, "no such page: counter, table or chat\n")),
        }
    }

    /// The page's trigger, as the view's is named.
    fn trigger(self) -> &'static str {
        match self {
            Page::Counter => "bump",
            Page::Table => "change",
            Page::Chat => "say",
        }
    }

    /// The bus topic of the page's floor sockets.
    fn topic(self) -> &'static str {
        match self {
            Page::Counter => "bench/live/floor/counter",
            Page::Table => "bench/live/floor/table",
            Page::Chat => "bench/live/floor/chat",
        }
    }
}

/// Each page's state, as the views' is, and a tracker of what its page holds.
struct Floor {
    count: u64,
    counter: Tracker,
    scores: Scores,
    table: Table,
    table_sent: Tracker,
    room: Room,
    chat: Tracker,
}

impl Floor {
    fn new() -> Floor {
        let table = Table::new(Scores::new());
        let room = Room::new();
        Floor {
            count: 0,
            counter: Tracker::mount(counter::render(0).into_part()).0,
            scores: Scores::new(),
            table_sent: Tracker::mount(table.render().into_part()).0,
            table,
            chat: Tracker::mount(room.render().into_part()).0,
            room,
        }
    }

    /// Makes the page's next change; the message its pages are sent, if any.
    fn change(&mut self, page: Page, body: &str) -> Result<Option<String>, Rejection> {
        let diff = match page {
            Page::Counter => {
                self.count += 1;
                self.counter.update(counter::render(self.count).into_part())
            }
            Page::Table => {
                let (id, score) = self.scores.change();
                self.table.set(id, score);
                self.table_sent.update(self.table.render().into_part())
            }
            Page::Chat => {
                self.room.say(chat::checked(body)?);
                self.chat.update(self.room.render().into_part())
            }
        };
        Ok(diff.as_str().map(str::to_owned))
    }
}

/// Opens a floor socket of a page (404 for another).
pub(crate) async fn socket<S: BenchState>(
    route: FloorSocket,
    ws: WebSocketUpgrade,
    State(state): State<S>,
) -> Result<WebSocketResponse, Rejection> {
    let page = Page::named(&route.page)?;
    let changes = state.bus().subscribe(page.topic());
    Ok(ws.on_upgrade(move |socket| forward(socket, changes)))
}

/// Hands each message published for the page to the socket, until either ends.
async fn forward(socket: WebSocket, mut changes: Subscription) {
    let (sender, mut receiver) = socket.split();
    loop {
        let message = match select(pin!(changes.recv()), pin!(receiver.recv())).await {
            Either::Left((Some(Ok(message)), _)) => message,
            // A socket too slow for the bus's window skips what it missed, as a view's does.
            Either::Left((Some(Err(_lagged)), _)) => continue,
            // The page says nothing the floor takes.
            Either::Right((Some(_), _)) => continue,
            Either::Left((None, _)) | Either::Right((None, _)) => break,
        };
        if sender.send(message.payload()).await.is_err() {
            break;
        }
    }
}

/// Makes a page's change and hands its message to every floor socket of the page;
/// answers the message. 404 for a trigger the page does not have.
pub(crate) async fn trigger<S: BenchState>(
    route: FloorTrigger,
    State(state): State<S>,
    body: String,
) -> Result<String, Rejection> {
    let page = Page::named(&route.page)?;
    if route.trigger != page.trigger() {
        return Err(Rejection::custom(
            StatusCode::NOT_FOUND,
            format!("{}'s trigger is {}\n", route.page, page.trigger()),
        ));
    }
    let message = FLOOR.with_borrow_mut(|floor| floor.change(page, &body))?;
    let Some(message) = message else { return Ok(String::new()) };
    super::publish(state.bus(), page.topic(), &message).await?;
    Ok(message)
}
