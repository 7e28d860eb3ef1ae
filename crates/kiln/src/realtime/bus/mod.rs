//! The bus: topics that handlers publish to and subscribe to, delivered to every
//! worker of the process and, through PostgreSQL `LISTEN`/`NOTIFY`, to every process
//! that shares the database.
//!
//! - Each worker owns its topic table: subscribing, and delivering to the worker's
//!   subscribers, take no lock. A message crosses to the other workers through
//!   per-worker channels (and, across processes, through the database).
//! - A topic keeps its last [`BUS_WINDOW`] messages on each worker, once: every
//!   subscriber reads them through its own cursor. That window bounds the memory a
//!   slow subscriber can hold; one that falls further behind is told it
//!   [`Lagged`] and goes on from the oldest message kept.
//! - Messages carry ids that grow in the order they were published, so a browser
//!   that reconnects with `Last-Event-ID` gets what it missed from the window
//!   ([`LocalBus::resume`]). Two messages published at the same instant on two
//!   workers (or processes) may arrive in either order, and a resume right between
//!   them may repeat or miss one: ids order a stream, they are not a ledger.
//! - A topic's window lives as long as the worker: name topics after things that
//!   exist (a page, a room), and check them before subscribing, not one per visitor.

mod local;
#[cfg(feature = "postgres")]
mod postgres;
mod topic;

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::realtime::Event;

pub use local::{BusEvents, LocalBus, Subscription};
#[cfg(feature = "postgres")]
pub use postgres::PostgresBus;

/// Messages subscribers missed because they fell behind the window (the sum of every
/// [`Lagged`] they read), in this process; `/metrics` reports it. Touched only when a
/// subscriber lags, never per message.
pub(crate) static LAGGED_MESSAGES: AtomicU64 = AtomicU64::new(0);

/// How many messages of each topic every worker keeps, for subscribers that read
/// behind and for resuming after `Last-Event-ID`, unless [`Bus::window`] says otherwise.
pub const BUS_WINDOW: usize = 256;
/// Longest topic name, in bytes.
pub const MAX_TOPIC_BYTES: usize = 200;

/// One message on the bus.
#[derive(Clone, PartialEq, Eq)]
pub struct Message {
    id: u64,
    topic: Arc<str>,
    payload: Arc<str>,
}

impl Message {
    /// Its id: later messages have larger ids.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The topic it was published to.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// What was published.
    pub fn payload(&self) -> &str {
        &self.payload
    }

    /// The message as a Server-Sent Event: its id and its payload as data.
    pub fn to_event(&self) -> Event {
        let mut id = itoa::Buffer::new();
        Event::new().id(id.format(self.id)).data(&self.payload)
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message").field("id", &self.id).field("topic", &self.topic).finish_non_exhaustive()
    }
}

/// A subscriber fell behind: this many messages were dropped before it read them
/// (0 when the number is not known: the link to the database was lost for a while,
/// or a resume asked for messages older than the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lagged(pub u64);

impl fmt::Display for Lagged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("some messages were missed"),
            n => write!(f, "{n} messages were missed"),
        }
    }
}

impl std::error::Error for Lagged {}

/// Why a message was not published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishError {
    /// The topic is empty, longer than [`MAX_TOPIC_BYTES`], or holds a line break or
    /// NUL; or the payload holds NUL.
    Invalid(&'static str),
    /// The link to the database is down; nothing was sent.
    Unavailable(String),
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::Invalid(why) => write!(f, "cannot publish: {why}"),
            PublishError::Unavailable(why) => write!(f, "cannot publish now: {why}"),
        }
    }
}

impl std::error::Error for PublishError {}

fn check(topic: &str, payload: &str) -> Result<(), PublishError> {
    if topic.is_empty() || topic.len() > MAX_TOPIC_BYTES {
        return Err(PublishError::Invalid("a topic is 1 to 200 bytes long"));
    }
    if topic.contains(['\n', '\r', '\0']) || payload.contains('\0') {
        return Err(PublishError::Invalid("a topic holds no line break or NUL, and a payload no NUL"));
    }
    Ok(())
}

/// What reaches a worker from the others (or from the database link).
#[derive(Clone)]
enum Delivery {
    Message(Message),
    /// Messages may have been lost (the database link was down): every subscriber
    /// is told it lagged.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Gap,
}

/// The process's bus; clone it into each worker's state factory and
/// [`attach`](Self::attach) there.
///
/// ```
/// use kiln::realtime::{Bus, Sse, LastEventId};
/// use kiln::{App, Route, State};
///
/// #[derive(Route)]
/// #[route("/news/events")]
/// struct NewsEvents;
///
/// async fn events(_: NewsEvents, bus: State<kiln::realtime::LocalBus>, last: Option<LastEventId>) -> Sse<kiln::realtime::BusEvents> {
///     let after = last.and_then(|id| id.parse());
///     Sse::new(bus.resume("news", after).events())
/// }
///
/// let bus = Bus::new();
/// let app = App::new(move |_| bus.attach()).route(events);
/// # let _ = app;
/// ```
#[derive(Clone)]
pub struct Bus {
    shared: Arc<Shared>,
}

struct Shared {
    window: usize,
    /// The next id within the process (without a database link).
    next_id: AtomicU64,
    /// Each worker's inbox, once it has used the bus; locked when a worker joins and,
    /// with a database link, when the link delivers (on its own thread).
    inboxes: Mutex<Vec<mpsc::UnboundedSender<Delivery>>>,
    /// Changes when a worker joins, so that workers refresh their copy of `inboxes`.
    generation: AtomicUsize,
    /// Set once, right after the link starts (it holds the bus weakly).
    #[cfg(feature = "postgres")]
    link: std::sync::OnceLock<kiln_db::Notifier>,
}

impl fmt::Debug for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bus").field("window", &self.shared.window).finish_non_exhaustive()
    }
}

impl Default for Bus {
    fn default() -> Self {
        Bus::new()
    }
}

impl Bus {
    /// A bus within this process: every worker's subscribers get every message.
    pub fn new() -> Bus {
        Bus { shared: Arc::new(Shared::new(BUS_WINDOW)) }
    }

    /// Keeps `messages` per topic on each worker instead of [`BUS_WINDOW`] (at least 1).
    /// Call it before [`attach`](Self::attach)ing, on a bus not yet cloned; a
    /// PostgreSQL bus takes its window from `PostgresBus::window`.
    pub fn window(mut self, messages: usize) -> Bus {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.window = messages.max(1);
        }
        self
    }

    /// This worker's handle on the bus; call it on the worker (in the app's state
    /// factory). It joins the fan-out when it is first used.
    pub fn attach(&self) -> LocalBus {
        LocalBus::new(Arc::clone(&self.shared))
    }
}

impl Shared {
    fn new(window: usize) -> Shared {
        // Ids start at the time in microseconds, so that a restarted process does not
        // give again the ids a browser remembers from the last one.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros());
        Shared {
            window,
            next_id: AtomicU64::new(u64::try_from(now).unwrap_or(0)),
            inboxes: Mutex::new(Vec::new()),
            generation: AtomicUsize::new(0),
            #[cfg(feature = "postgres")]
            link: std::sync::OnceLock::new(),
        }
    }

    fn join(&self, inbox: mpsc::UnboundedSender<Delivery>) {
        self.inboxes.lock().unwrap_or_else(|e| e.into_inner()).push(inbox);
        self.generation.fetch_add(1, Ordering::Release);
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Hands a delivery to every worker (the database link's path).
    #[cfg(feature = "postgres")]
    fn deliver_all(&self, delivery: &Delivery) {
        let mut inboxes = self.inboxes.lock().unwrap_or_else(|e| e.into_inner());
        let before = inboxes.len();
        inboxes.retain(|inbox| inbox.send(delivery.clone()).is_ok());
        if inboxes.len() != before {
            self.generation.fetch_add(1, Ordering::Release);
        }
    }
}
