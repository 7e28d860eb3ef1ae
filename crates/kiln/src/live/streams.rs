//! The live event streams open in this process, by id, so that an event posted for a
//! stream reaches its view whichever worker took the POST: a stream's view runs on
//! the worker that opened it, and the POST may land on any other (a per-process table
//! behind a lock, touched once per event; the bus would cost a serialisation and a
//! fan-out to every worker for what is one hop between two threads). Across processes
//! (several instances behind a balancer that does not keep a client on one) a POST
//! finds no stream and is answered 404; the page then opens its stream again.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use tokio::sync::mpsc;

use crate::live::transport::FromPage;

/// The open streams: each one's token and the way to its view.
static OPEN: LazyLock<Mutex<HashMap<String, Open>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

struct Open {
    /// The token the stream was opened with: an event must carry the same one.
    token: String,
    events: mpsc::Sender<FromPage>,
}

/// A stream's place in the table, removed when dropped (when its view has ended).
pub(crate) struct Registration {
    id: String,
}

impl Registration {
    /// The stream's id: 64 random hex digits, which only its page is told.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        OPEN.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
    }
}

/// Registers a stream opened with `token`; its view receives at most `queue` events
/// it has not taken yet.
pub(crate) fn register(token: &str, queue: u32) -> (Registration, mpsc::Receiver<FromPage>) {
    let (events, inbox) = mpsc::channel(usize::try_from(queue).unwrap_or(usize::MAX).max(1));
    let id = crate::key::random_token();
    let open = Open { token: token.to_owned(), events };
    OPEN.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), open);
    (Registration { id }, inbox)
}

/// Why an event was not handed to its stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Undelivered {
    /// No stream of that id is open in this process with that token.
    NotOpen,
    /// The stream's view has not taken the events it was sent.
    Full,
}

/// Hands `event` to the view of stream `id`, if it was opened with `token`.
pub(crate) fn deliver(id: &str, token: &str, event: FromPage) -> Result<(), Undelivered> {
    let open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
    let stream = open.get(id).filter(|stream| stream.token == token).ok_or(Undelivered::NotOpen)?;
    stream.events.try_send(event).map_err(|e| match e {
        mpsc::error::TrySendError::Full(_) => Undelivered::Full,
        mpsc::error::TrySendError::Closed(_) => Undelivered::NotOpen,
    })
}
