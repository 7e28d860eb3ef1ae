//! How many readers have a page open, across instances: presence over the bus. Each
//! open copy of a page has an id of its own and says so on the page's readers topic
//! when it connects (`join`), every [`HEARTBEAT`] while open (`here`), and when it
//! goes (`leave`, from the view's `disconnected`); a copy that hears another join
//! answers `here` at once, so that the newcomer counts it without waiting for a
//! heartbeat. Each copy counts the distinct ids heard from within [`STALE`]: one whose
//! instance died without a word drops out.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use kiln::realtime::{LocalBus, Message};

/// How often an open copy says it is still there.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(10);
/// How long a copy not heard from still counts: three heartbeats missed.
pub(crate) const STALE: Duration = Duration::from_secs(30);

/// The bus topic of a page's readers.
pub(crate) fn topic(slug: &str) -> String {
    format!("readers/{slug}")
}

/// A message on a readers topic, as a live view takes it.
pub(crate) struct Presence(Message);

impl From<Message> for Presence {
    fn from(message: Message) -> Self {
        Presence(message)
    }
}

/// The heartbeat's tick.
#[derive(Clone)]
pub(crate) struct Heartbeat;

/// One open copy's view of who reads its page.
pub(crate) struct Readers {
    me: String,
    bus: LocalBus,
    topic: String,
    /// Each reader heard from, with when.
    seen: HashMap<String, Instant>,
}

impl Readers {
    /// A copy of the page at `slug` that has just connected: it counts itself.
    pub(crate) fn new(bus: &LocalBus, slug: &str) -> Self {
        let me = kiln::random_token()[..16].to_owned();
        let seen = HashMap::from([(me.clone(), Instant::now())]);
        Readers { me, bus: bus.clone(), topic: topic(slug), seen }
    }

    /// How many read the page now.
    pub(crate) fn count(&self) -> usize {
        self.seen.len()
    }

    /// Takes a message of the topic; gives what to answer, if anything (`here`, to
    /// a newcomer).
    pub(crate) fn heard(&mut self, Presence(message): &Presence) -> Option<&'static str> {
        let (what, id) = message.payload().split_once(' ')?;
        match what {
            "leave" => {
                self.seen.remove(id);
                None
            }
            "join" | "here" => {
                let new = self.seen.insert(id.to_owned(), Instant::now()).is_none();
                (what == "join" && id != self.me && new).then_some("here")
            }
            _ => None,
        }
    }

    /// Forgets the readers not heard from within [`STALE`].
    pub(crate) fn expire(&mut self) {
        let me = &self.me;
        self.seen.retain(|id, at| id == me || at.elapsed() < STALE);
    }

    /// Says `what` (`join`, `here`, `leave`) on the page's topic. A bus that is down
    /// costs only the count.
    pub(crate) fn say(&self, what: &str) -> impl Future<Output = Said> + 'static {
        let (bus, topic, payload) = (self.bus.clone(), self.topic.clone(), format!("{what} {}", self.me));
        async move {
            if let Err(e) = bus.publish(&topic, &payload).await {
                eprintln!("kiln-demo: {topic}: not said: {e}");
            }
            Said
        }
    }
}

/// Something was said on the readers topic (nothing to do when it is).
pub(crate) struct Said;
