//! One worker's side of the bus: its topic table, its subscriptions, and the task
//! that takes in what the other workers (or the database link) deliver.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use futures_core::Stream;
use kiln_http::{Drain, draining};
use tokio::sync::mpsc;

use super::topic::{Entry, Topic, lagged_event};
use super::{Delivery, Lagged, Message, PublishError, Shared, check};
use crate::realtime::Event;

/// A worker's handle on the [`Bus`](super::Bus): publish and subscribe. It is
/// `!Send`, made per worker by [`Bus::attach`](super::Bus::attach); clones share it.
#[derive(Clone)]
pub struct LocalBus(Rc<Local>);

struct Local {
    shared: Arc<Shared>,
    /// Each topic shared with its subscriptions, which reach it without a lookup.
    topics: RefCell<HashMap<Arc<str>, Rc<RefCell<Topic>>>>,
    /// This worker's inbox; `sender` is its other end, handed to the others on joining.
    inbox: RefCell<mpsc::UnboundedReceiver<Delivery>>,
    sender: mpsc::UnboundedSender<Delivery>,
    joined: Cell<bool>,
    /// Whether the task that empties the inbox runs.
    pumping: Cell<bool>,
    /// The other workers' inboxes, as of `Shared::generation` `.0`.
    peers: RefCell<(usize, Vec<mpsc::UnboundedSender<Delivery>>)>,
}

impl fmt::Debug for LocalBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalBus").field("topics", &self.0.topics.borrow().len()).finish_non_exhaustive()
    }
}

impl LocalBus {
    pub(super) fn new(shared: Arc<Shared>) -> LocalBus {
        let (sender, inbox) = mpsc::unbounded_channel();
        LocalBus(Rc::new(Local {
            shared,
            topics: RefCell::new(HashMap::new()),
            inbox: RefCell::new(inbox),
            sender,
            joined: Cell::new(false),
            pumping: Cell::new(false),
            peers: RefCell::new((usize::MAX, Vec::new())),
        }))
    }

    /// Publishes `payload` to `topic`: every subscriber of it, on every worker (and,
    /// on a PostgreSQL bus, in every process), gets it. Returns the message's id.
    pub async fn publish(&self, topic: &str, payload: &str) -> Result<u64, PublishError> {
        check(topic, payload)?;
        self.start();
        #[cfg(feature = "postgres")]
        if let Some(link) = self.0.shared.link.get() {
            // The message comes back through the link, to every worker alike, so
            // that every process sees the same messages in the same order.
            return link.notify(topic, payload).await.map_err(|e| PublishError::Unavailable(e.to_string()));
        }
        let message = Message { id: self.0.shared.next_id(), topic: topic.into(), payload: payload.into() };
        self.0.deliver(Some(message.clone()));
        let id = message.id;
        self.0.send_to_peers(Delivery::Message(message));
        Ok(id)
    }

    /// The messages published to `topic` from now on.
    pub fn subscribe(&self, topic: &str) -> Subscription {
        self.start();
        let (name, topic) = self.0.topic(topic);
        let cursor = topic.borrow().next_seq();
        Subscription { topic, name, cursor, slot: None, lag_first: false, drain: None }
    }

    /// The messages of `topic` after the one with id `after` (a `Last-Event-ID`)
    /// that the window still holds, then those published from now on; without an id,
    /// as [`subscribe`](Self::subscribe). If the window no longer reaches back to it,
    /// the subscription starts with [`Lagged`]`(0)`.
    pub fn resume(&self, topic: &str, after: Option<u64>) -> Subscription {
        let Some(after) = after else { return self.subscribe(topic) };
        self.start();
        let (name, topic) = self.0.topic(topic);
        let (cursor, lag_first) = topic.borrow().resume_at(after);
        Subscription { topic, name, cursor, slot: None, lag_first, drain: None }
    }

    /// Joins the fan-out and starts the task that empties the inbox, if not yet.
    /// Joining waits for first use so that a worker that never uses the bus is sent
    /// nothing; the task starts here, inside a request, because that is where a
    /// worker's task set is sure to run (a bare `LocalSet` in a test may end and
    /// take the task with it).
    fn start(&self) {
        if !self.0.joined.replace(true) {
            self.0.shared.join(self.0.sender.clone());
        }
        if !self.0.pumping.replace(true) {
            tokio::task::spawn_local(pump(Rc::clone(&self.0)));
        }
    }
}

/// Takes in what the other workers deliver, for as long as the worker runs.
async fn pump(local: Rc<Local>) {
    /// Marks the pump stopped however it ends (a test's task set may end before the
    /// worker's bus does), so that the next use starts it again.
    struct Stopped(Rc<Local>);
    impl Drop for Stopped {
        fn drop(&mut self) {
            self.0.pumping.set(false);
        }
    }
    let local = Stopped(local);
    while let Some(delivery) = poll_fn(|cx| local.0.inbox.borrow_mut().poll_recv(cx)).await {
        match delivery {
            Delivery::Message(message) => local.0.deliver(Some(message)),
            Delivery::Gap => {
                let window = local.0.shared.window;
                let topics: Vec<_> = local.0.topics.borrow().values().cloned().collect();
                for topic in topics {
                    topic.borrow_mut().push(None, window);
                }
            }
        }
    }
}

impl Local {
    /// The topic of that name, made on first use, and its name as the table keeps it.
    fn topic(&self, name: &str) -> (Arc<str>, Rc<RefCell<Topic>>) {
        let mut topics = self.topics.borrow_mut();
        if let Some((name, topic)) = topics.get_key_value(name) {
            return (Arc::clone(name), Rc::clone(topic));
        }
        let (name, topic): (Arc<str>, _) = (name.into(), Rc::new(RefCell::new(Topic::new())));
        topics.insert(Arc::clone(&name), Rc::clone(&topic));
        (name, topic)
    }

    fn deliver(&self, entry: Entry) {
        let Some(message) = &entry else { return };
        let (_, topic) = self.topic(&message.topic);
        // Waking the subscribers runs none of them: nothing else borrows the topic now.
        topic.borrow_mut().push(entry, self.shared.window);
    }

    fn send_to_peers(&self, delivery: Delivery) {
        let generation = self.shared.generation.load(Ordering::Acquire);
        let mut peers = self.peers.borrow_mut();
        if peers.0 != generation {
            let inboxes = self.shared.inboxes.lock().unwrap_or_else(|e| e.into_inner());
            let others = inboxes.iter().filter(|s| !s.same_channel(&self.sender)).cloned().collect();
            *peers = (generation, others);
        }
        for peer in &peers.1 {
            // A worker that has stopped drops its inbox; nothing is owed to it.
            let _ = peer.send(delivery.clone());
        }
    }
}

/// The messages of one topic, read with [`recv`](Self::recv) (or as a [`Stream`]):
/// `Err(Lagged(n))` when the subscriber fell behind the window and `n` messages were
/// skipped. It ends when the worker begins to shut down; forward it with
/// [`events`](Self::events) as Server-Sent Events.
pub struct Subscription {
    topic: Rc<RefCell<Topic>>,
    name: Arc<str>,
    cursor: u64,
    slot: Option<usize>,
    lag_first: bool,
    /// The worker's drain signal, taken on the first read: a subscription only
    /// forwarded as [`BusEvents`] (whose `Sse` ends on drain itself) never needs it.
    drain: Option<Drain>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription").field("topic", &self.name).field("cursor", &self.cursor).finish()
    }
}

impl Subscription {
    /// The next message, waiting for one; `Err(Lagged(n))` if the subscriber fell
    /// behind; `None` once the worker begins to shut down (as
    /// [`draining`](crate::realtime::draining) resolves), so that a loop over it ends
    /// with the server. Cancel-safe: a message is taken only when `recv` returns it,
    /// so it can wait in `tokio::select!` beside a socket.
    ///
    /// ```
    /// use kiln::realtime::{Bus, Lagged};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(
    /// # tokio::task::LocalSet::new().run_until(async {
    /// let bus = Bus::new().attach();
    /// let mut news = bus.subscribe("news");
    /// bus.publish("news", "kiln 1.0 is out").await?;
    /// match news.recv().await {
    ///     Some(Ok(message)) => assert_eq!(message.payload(), "kiln 1.0 is out"),
    ///     Some(Err(Lagged(missed))) => println!("{missed} messages missed"),
    ///     None => println!("the server is shutting down"),
    /// }
    /// # Ok::<(), kiln::realtime::PublishError>(())
    /// # })).unwrap();
    /// ```
    pub async fn recv(&mut self) -> Option<Result<Message, Lagged>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// The messages as Server-Sent Events: each with its id (so that a reconnecting
    /// browser sends it back as `Last-Event-ID`) and its payload as data; a lag as an
    /// event of type `lagged` whose data is the number missed (0: unknown).
    pub fn events(self) -> BusEvents {
        BusEvents(self)
    }
}

impl Subscription {
    /// The next item as `read` takes it from the topic (a lag to tell first as
    /// `lagged` makes it), or `Pending` with the task's waker left with the topic.
    fn poll_read<T>(
        &mut self,
        cx: &mut Context<'_>,
        read: impl FnOnce(&Topic, &mut u64) -> Option<T>,
        lagged: impl FnOnce(Lagged) -> T,
    ) -> Poll<T> {
        if std::mem::take(&mut self.lag_first) {
            return Poll::Ready(lagged(Lagged(0)));
        }
        let mut topic = self.topic.borrow_mut();
        match read(&topic, &mut self.cursor) {
            Some(item) => Poll::Ready(item),
            None => {
                topic.wait(&mut self.slot, cx.waker());
                Poll::Pending
            }
        }
    }
}

impl Stream for Subscription {
    type Item = Result<Message, Lagged>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.drain.get_or_insert_with(draining).is_draining() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = self.poll_read(cx, Topic::read, Err) {
            return Poll::Ready(Some(item));
        }
        // The task waits for the drain only when it is about to wait at all: a
        // subscription with a message ready pays no waker registration for it.
        match self.drain.as_mut().map(|drain| Pin::new(drain).poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(None),
            _ => Poll::Pending,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            self.topic.borrow_mut().leave(slot);
        }
    }
}

/// A [`Subscription`] as Server-Sent Events; see [`Subscription::events`].
#[derive(Debug)]
pub struct BusEvents(Subscription);

impl Stream for BusEvents {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        // Each message is rendered once per worker and its bytes shared by every
        // subscriber (see `Topic::read_event`).
        self.0.poll_read(cx, Topic::read_event, lagged_event).map(|event| Some(Event::rendered(event)))
    }
}
