//! A live view: typed state on the server, rendered with `live_html!`, changed by the
//! typed events its markup names and by messages the server pushes.

use std::future::Future;
use std::task::{Context, Poll};

use serde::de::DeserializeOwned;

use crate::csrf::Csrf;
use crate::extract::RequestContext;
use crate::live::Live;
use crate::live::limits::Limits;
use crate::markup::{Document, Flow, Fragment};
use crate::rejection::Rejection;
use crate::route::Route;

/// A page whose state lives on the server: built by [`mount`](LiveView::mount) from
/// the request that opens it, changed by [`handle`](LiveView::handle) for each event of
/// its own type, and shown by [`render`](LiveView::render).
///
/// ```
/// use kiln::live::{Live, LiveSocket, LiveTest, LiveView};
/// use kiln::{Rejection, RequestContext, Route, live_html};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Route)]
/// #[route("/counter")]
/// struct CounterPage;
///
/// #[derive(Serialize, Deserialize)]
/// enum Event {
///     Increment,
///     Reset,
/// }
///
/// struct Counter {
///     count: u32,
/// }
///
/// impl LiveView for Counter {
///     type AppState = ();
///     type Route = CounterPage;
///     type Event = Event;
///
///     async fn mount(_route: CounterPage, _cx: RequestContext<'_, ()>) -> Result<Self, Rejection> {
///         Ok(Counter { count: 0 })
///     }
///
///     fn handle(&mut self, event: Event, _: &mut LiveSocket<Self>) {
///         match event {
///             Event::Increment => self.count += 1,
///             Event::Reset => self.count = 0,
///         }
///     }
///
///     fn render(&self) -> Live<Event> {
///         live_html! {
///             div.counter {
///                 p { "Count: " (self.count) }
///                 button type="button" on:click=(Event::Increment) { "+1" }
///             }
///         }
///     }
/// }
///
/// let mut test = LiveTest::new(Counter { count: 0 });
/// assert!(test.html().contains("<p>Count: 0</p>"));
/// let diff = test.event(Event::Increment);
/// assert_eq!(diff.to_json().unwrap(), r#"{"0":"1"}"#);
/// assert!(test.event(Event::Reset).json().is_some());
/// assert!(test.html().contains(r#"data-kiln-click="&quot;Increment&quot;""#));
/// ```
pub trait LiveView: Sized + 'static {
    /// The app's per-worker state the view is mounted with (`()` for none).
    type AppState: 'static;
    /// The typed route the view's page is served on.
    type Route: Route;
    /// The events the view's markup names and [`handle`](LiveView::handle) takes: an
    /// enum of the app's own. The page sends them back as it was given them, and they
    /// are decoded into this type, so an event of another type cannot be named. Value
    /// events (`on:click=(..)`) need it `Serialize` too; a variant that only a form
    /// sends can be `#[serde(skip_serializing)]`, so its payload need not serialise.
    type Event: DeserializeOwned;

    /// The limits of the view's sockets: event size, rate, refusals, unsent bytes, and
    /// how long a page's token lasts.
    const LIMITS: Limits = Limits::DEFAULT;

    /// Builds the view's state from its route and the request that opens the page (its
    /// state, session and cookies through their extractors); a rejection answers the
    /// request instead.
    fn mount(
        route: Self::Route,
        cx: RequestContext<'_, Self::AppState>,
    ) -> impl Future<Output = Result<Self, Rejection>>;

    /// Called once the page's socket is up, before the mount message is sent: the
    /// place to subscribe to bus topics and set timers ([`LiveSocket`]), which only a
    /// connected page needs (the first answer over plain HTTP never calls it).
    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        let _ = socket;
    }

    /// Called once when the page's connection has ended for any reason but a panic in
    /// the view (the page closed or reloaded, the network dropped, the server closed
    /// it: too many invalid events, a drain): the place to say that the page left. The
    /// view's subscriptions and timers have stopped; work it starts here
    /// ([`LiveSocket::spawn`]: a publish, a query) still runs to its end, for at most
    /// ten seconds, its result handed to [`HandleInfo`] as usual.
    fn disconnected(&mut self, socket: &mut LiveSocket<Self>) {
        let _ = socket;
    }

    /// Changes the state for an event from the page. Work to await (a query, a
    /// publish) is started on the `socket` ([`LiveSocket::spawn`]) and its result comes
    /// back as a message ([`HandleInfo`]); the socket may also subscribe and set timers.
    fn handle(&mut self, event: Self::Event, socket: &mut LiveSocket<Self>);

    /// The view's markup for the current state, written with [`kiln::live_html!`](crate::live_html).
    fn render(&self) -> Live<Self::Event>;

    /// A key of the state [`render`](LiveView::render) reads, for a view that many
    /// pages show in the same state (a room, a shared counter, a board): views of this
    /// type whose keys are equal must render the same markup. When one message reaches
    /// many of them on a worker, the first view to go from key `a` to key `b` renders
    /// and diffs, and the others going from `a` to `b` are sent the same message
    /// without rendering (and share one copy of the rendering), and a view whose key did
    /// not change is not rendered at all. `None` (the default): every view renders its
    /// own, always right.
    ///
    /// A key that is easy to get right is a version of what the page shows: a number
    /// the shared state bumps on each change, together with every per-page choice the
    /// markup reads (a sort order, a filter, whose page it is). Two states that render
    /// differently with one key show one page the other's markup.
    ///
    /// ```
    /// # use kiln::live::{Live, LiveSocket, LiveView};
    /// # use kiln::{Rejection, RequestContext, Route, live_html};
    /// # #[derive(Route)]
    /// # #[route("/score")]
    /// # struct ScorePage;
    /// struct Score {
    ///     /// The shared score, bumped by a bus message to every page.
    ///     points: u64,
    /// }
    ///
    /// impl LiveView for Score {
    /// #   type AppState = ();
    /// #   type Route = ScorePage;
    /// #   type Event = ();
    /// #   async fn mount(_: ScorePage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
    /// #       Ok(Score { points: 0 })
    /// #   }
    /// #   fn handle(&mut self, (): (), _: &mut LiveSocket<Self>) {}
    ///     // `render` reads `points` alone: it is the key.
    ///     fn render_key(&self) -> Option<u64> {
    ///         Some(self.points)
    ///     }
    ///
    ///     fn render(&self) -> Live<()> {
    ///         live_html! { p { "Score: " (self.points) } }
    ///     }
    /// }
    /// ```
    fn render_key(&self) -> Option<u64> {
        None
    }

    /// The visitor's [`Csrf`] as `mount` extracted it, for a view whose markup holds a
    /// form that also posts without JavaScript (its token in a hidden field): the first
    /// answer sets that token's cookie when it is new and ties the page's socket to it.
    /// A visitor without the cookie is given a new token by each extraction, so a view
    /// that renders one says which. `None` (the default): the first answer extracts its
    /// own.
    fn visitor(&self) -> Option<&Csrf> {
        None
    }

    /// The whole page of the first answer ([`App::live`](crate::App::live)) around `view`,
    /// the view rendered in its container: by default a bare document titled with the
    /// view's type name. A site puts its own layout here.
    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        let name = std::any::type_name::<Self>();
        let title = name.rsplit("::").next().unwrap_or(name);
        crate::html! {
            html lang="en" {
                head { meta charset="utf-8"; title { (title) } }
                body { (view) }
            }
        }
    }
}

/// A message the server pushes to a live view (a bus message, a timer's tick), of type
/// `M`: a view takes each kind of message it subscribes to.
pub trait HandleInfo<M>: LiveView {
    /// Changes the state for a message; the `socket` starts work, subscribes and sets
    /// timers as in [`handle`](LiveView::handle).
    fn handle_info(&mut self, message: M, socket: &mut LiveSocket<Self>);
}

/// One source of messages for a view.
pub(crate) trait Source<V> {
    /// Polls for the source's next message and, when one has come, hands it to `view`
    /// at once, with `socket` (the view's socket, this source aside): no message is
    /// boxed on its way. `Ready(Some(()))` once one was handed, `Ready(None)` once the
    /// source has ended.
    fn poll_deliver(&mut self, cx: &mut Context<'_>, view: &mut V, socket: &mut LiveSocket<V>) -> Poll<Option<()>>;
}

/// A connected view's socket, as [`LiveView::connected`] and [`LiveView::handle`] see
/// it: what the view subscribes to, the timers it sets and the work it starts
/// ([`spawn`](LiveSocket::spawn)), each message delivered to its [`HandleInfo`] impl
/// while the page is open (and dropped with the socket).
///
/// ```
/// use std::time::Duration;
///
/// use kiln::live::{HandleInfo, Live, LiveSocket, LiveView};
/// use kiln::realtime::{LocalBus, Message};
/// use kiln::{Rejection, RequestContext, Route, State, live_html};
///
/// #[derive(Route)]
/// #[route("/news")]
/// struct NewsPage;
///
/// struct News {
///     bus: LocalBus,
///     latest: String,
///     ticks: u32,
/// }
///
/// #[derive(Clone)]
/// struct Tick;
///
/// impl LiveView for News {
///     type AppState = LocalBus;
///     type Route = NewsPage;
///     type Event = ();
///
///     async fn mount(_: NewsPage, cx: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
///         let bus = LocalBus::clone(cx.state());
///         Ok(News { bus, latest: String::new(), ticks: 0 })
///     }
///
///     fn connected(&mut self, socket: &mut LiveSocket<Self>) {
///         socket.subscribe::<Message>(self.bus.subscribe("news"));
///         socket.every(Duration::from_secs(1), Tick);
///     }
///
///     fn handle(&mut self, (): (), _: &mut LiveSocket<Self>) {}
///
///     fn render(&self) -> Live<()> {
///         live_html! { p { (self.latest) } p { (self.ticks) " s" } }
///     }
/// }
///
/// impl HandleInfo<Message> for News {
///     fn handle_info(&mut self, message: Message, _: &mut LiveSocket<Self>) {
///         self.latest = message.payload().to_owned();
///     }
/// }
///
/// impl HandleInfo<Tick> for News {
///     fn handle_info(&mut self, Tick: Tick, _: &mut LiveSocket<Self>) {
///         self.ticks += 1;
///     }
/// }
/// ```
pub struct LiveSocket<V> {
    sources: Vec<Box<dyn Source<V>>>,
}

impl<V> LiveSocket<V> {
    pub(crate) fn new() -> Self {
        LiveSocket { sources: Vec::new() }
    }

    /// Adds a source of messages (`push.rs` makes them).
    pub(crate) fn add(&mut self, source: Box<dyn Source<V>>) {
        self.sources.push(source);
    }

    /// Whether no source is left: nothing more will be delivered.
    pub(crate) fn is_idle(&self) -> bool {
        self.sources.is_empty()
    }

    /// Hands `view` the next message of any source; pending forever when there is none
    /// (the socket waits on the page then). A panic in the view leaves this socket
    /// without its sources: the view is not used again.
    pub(crate) fn poll_deliver(&mut self, cx: &mut Context<'_>, view: &mut V) -> Poll<()> {
        // The sources are taken out while the view runs, so that it can add new ones.
        let mut sources = std::mem::take(&mut self.sources);
        let mut delivered = false;
        let mut i = 0;
        while i < sources.len() {
            match sources[i].poll_deliver(cx, view, self) {
                Poll::Ready(Some(())) => {
                    // The next poll starts after this source, so that one busy
                    // source does not starve the others.
                    sources.rotate_left(i + 1);
                    delivered = true;
                    break;
                }
                Poll::Ready(None) => drop(sources.swap_remove(i)),
                Poll::Pending => i += 1,
            }
        }
        // What the view added meanwhile goes after the others.
        sources.append(&mut self.sources);
        self.sources = sources;
        if delivered { Poll::Ready(()) } else { Poll::Pending }
    }
}
