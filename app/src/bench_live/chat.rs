//! The chat page: one room shared by every open view, showing its last 50 lines. `POST
//! /bench/live/chat/say` (its body the line, at most 200 bytes; or a view's own form)
//! appends a line and publishes `id text`; each view appends it, so its page is sent
//! that one line as a keyed insert (and, once 50 are shown, the oldest one's removal).
//! The room's next id is the view's render key: a view that missed a line takes the
//! shared room again, so a room's lines are always those its ids say.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};

use kiln::live::{HandleInfo, Live, LiveSocket, LiveView};
use kiln::markup::{Document, Flow, Fragment};
use kiln::realtime::{LocalBus, Message};
use kiln::{Rejection, RequestContext, Route, State, StatusCode, live_html};
use serde::Deserialize;

use super::BenchState;

/// Lines a page shows; older ones scroll away.
const KEEP: usize = 50;
/// Longest line, in bytes.
const MAX_LINE: usize = 200;
/// The bus topic of new lines: `id text`.
const TOPIC: &str = "bench/live/chat";

/// The room every view starts from.
static ROOM: Mutex<Room> = Mutex::new(Room::new());

/// The page.
#[derive(Route)]
#[route("/bench/live/chat")]
pub(crate) struct ChatPage;

/// The trigger: its body is the line.
#[derive(Route)]
#[route(POST, "/bench/live/chat/say")]
pub(crate) struct Say;

/// The form's one field.
#[derive(Deserialize)]
pub(crate) struct Line {
    text: String,
}

/// What the page sends: a line, from the form.
#[derive(Deserialize)]
pub(crate) enum Event {
    Say(Line),
}

/// The last lines of the room, each with its id (the key its page knows it by).
#[derive(Clone)]
pub(crate) struct Room {
    lines: VecDeque<(u64, Arc<str>)>,
    next_id: u64,
}

impl Room {
    /// No line yet.
    pub(crate) const fn new() -> Room {
        Room { lines: VecDeque::new(), next_id: 1 }
    }

    /// Appends a new line; its id.
    pub(crate) fn say(&mut self, text: &str) -> u64 {
        let id = self.next_id;
        self.hear(id, text.into());
        id
    }

    /// Takes a line said elsewhere, unless this room has it already.
    fn hear(&mut self, id: u64, text: Arc<str>) {
        if self.lines.back().is_some_and(|(last, _)| *last >= id) {
            return;
        }
        self.next_id = id + 1;
        self.lines.push_back((id, text));
        if self.lines.len() > KEEP {
            self.lines.pop_front();
        }
    }

    /// The view's markup, and the floor's.
    pub(crate) fn render(&self) -> Live<Event> {
        live_html! {
            ul {
                @for (id, text) in &self.lines; key = id { li { (&**text) } }
            }
            // `data-kiln-reset`: the client script empties the form once it is sent.
            form on:submit=(Event::Say) data-kiln-reset="" {
                input name="text" autocomplete="off" required maxlength="200";
                button { "Send" }
            }
        }
    }
}

/// One open room.
pub(crate) struct ChatView<S> {
    bus: LocalBus,
    room: Room,
    state: PhantomData<fn() -> S>,
}

/// A line the view's own form sent has been published, or refused.
pub(crate) struct Said;

impl<S: BenchState> LiveView for ChatView<S> {
    type AppState = S;
    type Route = ChatPage;
    type Event = Event;

    async fn mount(_: ChatPage, cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
        let bus = cx.state().bus().clone();
        Ok(ChatView { bus, room: current(), state: PhantomData })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.subscribe::<Message>(self.bus.subscribe(TOPIC));
        // Whatever was said between the mount and the subscription.
        self.room = current();
    }

    fn handle(&mut self, Event::Say(line): Event, socket: &mut LiveSocket<Self>) {
        let bus = self.bus.clone();
        socket.spawn(async move {
            let _refused = say_and_publish(&bus, &line.text).await;
            Said
        });
    }

    /// The render reads the room alone, whose lines the next id names.
    fn render_key(&self) -> Option<u64> {
        Some(self.room.next_id)
    }

    fn render(&self) -> Live<Event> {
        self.room.render()
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        super::page("Chat", view)
    }
}

impl<S: BenchState> HandleInfo<Message> for ChatView<S> {
    fn handle_info(&mut self, message: Message, _: &mut LiveSocket<Self>) {
        let Some((id, text)) = message.payload().split_once(' ') else { return };
        match id.parse::<u64>() {
            Ok(id) if id == self.room.next_id => self.room.hear(id, text.into()),
            // A line missed (the subscription lagged): the room as it is now.
            Ok(id) if id > self.room.next_id => self.room = current(),
            _ => {}
        }
    }
}

impl<S: BenchState> HandleInfo<Said> for ChatView<S> {
    fn handle_info(&mut self, Said: Said, _: &mut LiveSocket<Self>) {}
}

/// The shared room as it is now.
fn current() -> Room {
    ROOM.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// A line to say: 400 when empty, over [`MAX_LINE`] bytes, or holding a NUL (which
/// the bus refuses).
pub(crate) fn checked(text: &str) -> Result<&str, Rejection> {
    let text = text.trim();
    if text.is_empty() || text.len() > MAX_LINE || text.contains('\0') {
        let why = format!("a line is 1 to {MAX_LINE} bytes of UTF-8, without NUL\n");
        return Err(Rejection::custom(StatusCode::BAD_REQUEST, why));
    }
    Ok(text)
}

async fn say_and_publish(bus: &LocalBus, text: &str) -> Result<u64, Rejection> {
    let text = checked(text)?;
    let id = ROOM.lock().unwrap_or_else(PoisonError::into_inner).say(text);
    super::publish(bus, TOPIC, &format!("{id} {text}")).await?;
    Ok(id)
}

/// Appends the body as a line and answers its id once every local view has been handed it.
pub(crate) async fn say<S: BenchState>(_: Say, State(state): State<S>, text: String) -> Result<String, Rejection> {
    Ok(format!("{}\n", say_and_publish(state.bus(), &text).await?))
}
