//! What the server pushes to a connected view: bus messages, timers and the results of
//! work the view started, each delivered through [`HandleInfo`], set up in
//! [`LiveView::connected`] or [`LiveView::handle`] with the [`LiveSocket`] methods here
//! (the socket itself is in `view.rs`, beside the traits that take it).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_core::Stream;
use tokio::time::{Interval, MissedTickBehavior, Sleep};

use crate::live::view::{HandleInfo, LiveSocket, LiveView, Source};
use crate::realtime::{Message, Subscription};

impl<V: LiveView> LiveSocket<V> {
    /// Delivers each message of `subscription` as an `M` (a bus [`Message`] itself, or
    /// a type of the app's made from one). Messages the subscription lagged behind
    /// are skipped: the view is as current as the next message makes it.
    pub fn subscribe<M>(&mut self, subscription: Subscription)
    where
        M: From<Message> + 'static,
        V: HandleInfo<M>,
    {
        self.add(Box::new(Subscribed::<M> { subscription, into: std::marker::PhantomData }));
    }

    /// Delivers `message` every `period`, the first after one period. A tick missed
    /// while the worker was busy is delivered once, not caught up.
    pub fn every<M>(&mut self, period: Duration, message: M)
    where
        M: Clone + 'static,
        V: HandleInfo<M>,
    {
        let start = tokio::time::Instant::now() + period;
        let mut interval = tokio::time::interval_at(start, period);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        self.add(Box::new(Every { interval, message }));
    }

    /// Delivers `message` once, after `delay`.
    pub fn after<M>(&mut self, delay: Duration, message: M)
    where
        M: 'static,
        V: HandleInfo<M>,
    {
        self.add(Box::new(After { sleep: Box::pin(tokio::time::sleep(delay)), message: Some(message) }));
    }

    /// Runs `work` (a query, a publish) beside the view while its page is open, and
    /// delivers its result as a message, `M`: an event that needs to await starts it
    /// from [`LiveView::handle`] and changes the state again when it comes back. The
    /// socket goes on taking events and pushes meanwhile. A panic in `work` ends the
    /// view's socket as a panic in the view does; work still running when the page
    /// goes is dropped.
    ///
    /// ```
    /// use kiln::live::{HandleInfo, Live, LiveSocket, LiveTest, LiveView};
    /// use kiln::{Rejection, RequestContext, Route, live_html};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Route)]
    /// #[route("/lookup")]
    /// struct LookupPage;
    ///
    /// #[derive(Serialize, Deserialize)]
    /// enum Event {
    ///     Look,
    /// }
    ///
    /// /// What the lookup found.
    /// struct Found(String);
    ///
    /// struct Lookup {
    ///     answer: Option<String>,
    /// }
    ///
    /// impl LiveView for Lookup {
    ///     type AppState = ();
    ///     type Route = LookupPage;
    ///     type Event = Event;
    ///
    ///     async fn mount(_: LookupPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
    ///         Ok(Lookup { answer: None })
    ///     }
    ///
    ///     fn handle(&mut self, Event::Look: Event, socket: &mut LiveSocket<Self>) {
    ///         // A database query in an app; the page stays responsive meanwhile.
    ///         socket.spawn(async { Found("42".to_owned()) });
    ///     }
    ///
    ///     fn render(&self) -> Live<Event> {
    ///         live_html! { p { (self.answer.as_deref().unwrap_or("asking")) } }
    ///     }
    /// }
    ///
    /// impl HandleInfo<Found> for Lookup {
    ///     fn handle_info(&mut self, Found(answer): Found, _: &mut LiveSocket<Self>) {
    ///         self.answer = Some(answer);
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut test = LiveTest::new(Lookup { answer: None });
    /// assert!(test.event(Event::Look).is_empty());
    /// assert_eq!(test.push().await.to_json().unwrap(), r#"{"0":"42"}"#);
    /// # });
    /// ```
    pub fn spawn<M>(&mut self, work: impl Future<Output = M> + 'static)
    where
        M: 'static,
        V: HandleInfo<M>,
    {
        self.add(Box::new(Task { work: Some(Box::pin(work)) }));
    }
}

struct Subscribed<M> {
    subscription: Subscription,
    into: std::marker::PhantomData<fn() -> M>,
}

impl<V: HandleInfo<M>, M: From<Message> + 'static> Source<V> for Subscribed<M> {
    fn poll_deliver(&mut self, cx: &mut Context<'_>, view: &mut V, socket: &mut LiveSocket<V>) -> Poll<Option<()>> {
        loop {
            match Pin::new(&mut self.subscription).poll_next(cx) {
                Poll::Ready(Some(Ok(message))) => {
                    view.handle_info(M::from(message), socket);
                    return Poll::Ready(Some(()));
                }
                Poll::Ready(Some(Err(_lagged))) => continue,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

struct Every<M> {
    interval: Interval,
    message: M,
}

impl<V: HandleInfo<M>, M: Clone + 'static> Source<V> for Every<M> {
    fn poll_deliver(&mut self, cx: &mut Context<'_>, view: &mut V, socket: &mut LiveSocket<V>) -> Poll<Option<()>> {
        ready!(self.interval.poll_tick(cx));
        view.handle_info(self.message.clone(), socket);
        Poll::Ready(Some(()))
    }
}

struct After<M> {
    sleep: Pin<Box<Sleep>>,
    message: Option<M>,
}

impl<V: HandleInfo<M>, M: 'static> Source<V> for After<M> {
    fn poll_deliver(&mut self, cx: &mut Context<'_>, view: &mut V, socket: &mut LiveSocket<V>) -> Poll<Option<()>> {
        if self.message.is_some() && self.sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        // Fired: the message once, then the source ends.
        Poll::Ready(self.message.take().map(|message| view.handle_info(message, socket)))
    }
}

/// Work the view started. A panic in it goes on where the view's code runs (the
/// socket's poll of its sources), which ends the socket.
struct Task<M> {
    work: Option<Pin<Box<dyn Future<Output = M>>>>,
}

impl<V: HandleInfo<M>, M: 'static> Source<V> for Task<M> {
    fn poll_deliver(&mut self, cx: &mut Context<'_>, view: &mut V, socket: &mut LiveSocket<V>) -> Poll<Option<()>> {
        let Some(work) = self.work.as_mut() else { return Poll::Ready(None) };
        let Poll::Ready(message) = work.as_mut().poll(cx) else { return Poll::Pending };
        self.work = None;
        view.handle_info(message, socket);
        Poll::Ready(Some(()))
    }
}
