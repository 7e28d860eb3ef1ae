//! A live view's life on its page's connection: one [`Mounted`] view per page, from
//! the mount message to the close, over a WebSocket or an event stream alike (the
//! [`Outbox`] and [`Inbox`] of `transport.rs`). Each event from the page is decoded,
//! checked against the view's [`Limits`] and handled; each message the server pushes
//! is delivered; after either, the diff is sent. A page slow to read gets its changes
//! coalesced: while more than [`Limits::max_unsent_bytes`] wait to be written, the view
//! changes without rendering, and once the page has read, one diff from what it last
//! got to the latest state is sent, so a connection holds at most one pending state,
//! never a queue. A panic in the view ends its connection with 1011; the worker goes
//! on. Any other end runs [`LiveView::disconnected`].

use std::future::poll_fn;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;
use std::time::Duration;

use tokio::time::Instant;

use crate::live::diff::Diff;
use crate::live::event::decode_event;
use crate::live::limits::Limits;
use crate::live::mounted::Mounted;
use crate::live::transport::{FromPage, Inbox, Outbox, Unsent};
use crate::live::view::LiveView;
use crate::ws::{CloseCode, WebSocket};

/// How long the work that [`LiveView::disconnected`] starts may run once the page has
/// gone: long enough for a publish or a query, short enough that a stuck one does not
/// hold the view's memory.
const LEAVING: Duration = Duration::from_secs(10);

/// How a connection ended, when the server ends it.
pub(crate) struct Closing(pub(crate) CloseCode, pub(crate) &'static str);

/// The view panicked.
const PANICKED: Closing = Closing(CloseCode::INTERNAL_ERROR, "the live view failed");
/// Most deliveries of pushed messages before the page's events are read again.
const PUSHES_IN_A_ROW: u32 = 32;
/// The reply to an event over the rate.
const THROTTLED: &str = "too many events: slow down";

/// Why an event from the page was not handled.
enum Refused {
    /// Over the rate ([`Limits::events_per_second`]).
    Throttled,
    /// Not an event of the view: counted towards [`Limits::max_errors`].
    Invalid(String),
}

/// Runs `view` for the page at the other end of `socket` until either goes.
pub(crate) async fn run<V: LiveView>(view: V, socket: WebSocket) {
    let (tx, mut rx) = socket.split();
    live(view, &tx, &mut rx).await;
}

/// Runs `view` for the page at the other end of `tx` and `rx` until either goes, then
/// (unless the view panicked) its [`LiveView::disconnected`].
pub(crate) async fn live<V: LiveView>(view: V, tx: &impl Outbox, rx: &mut impl Inbox) {
    let (mut mounted, ended) = match caught(|| Mounted::connect(view)) {
        Ok((mut mounted, mount)) => {
            let ended = serve(&mut mounted, &mount, tx, rx).await;
            (Some(mounted), ended)
        }
        Err(panicked) => (None, Err(panicked)),
    };
    let panicked = matches!(ended, Err(Closing(code, _)) if code == PANICKED.0);
    if let Err(Closing(code, reason)) = ended {
        if tx.close(code, reason).await {
            rx.finish().await;
        }
    }
    if let (Some(mounted), false) = (&mut mounted, panicked) {
        disconnected(mounted).await;
    }
}

async fn serve<V: LiveView>(
    mounted: &mut Mounted<V>,
    mount: &Diff,
    tx: &impl Outbox,
    rx: &mut impl Inbox,
) -> Result<(), Closing> {
    let limits = V::LIMITS;
    if !send(tx, mount).await {
        return Ok(());
    }
    let mut rate = Rate::new(&limits);
    let mut errors = 0;
    // The view changed since the page was last sent a diff: its page was backed up.
    let mut dirty = false;
    let mut pushes = PUSHES_IN_A_ROW;
    'serve: loop {
        let backed_up = tx.queued() > limits.max_unsent_bytes;
        if dirty && !backed_up {
            dirty = false;
            let diff = caught(|| mounted.rerender())?;
            if !send(tx, &diff).await {
                return Ok(());
            }
            continue;
        }
        // Each change is rendered in the pass that made it, unless the page is backed
        // up: then only marked, and rendered once the page has read.
        let changed = tokio::select! {
            biased;
            // Pushes first (the page is not polled for each delivery), but the page
            // is read at least every `PUSHES_IN_A_ROW` deliveries. The message is
            // handed to the view inside the poll, and rendered there: one pass and one
            // unwind guard per delivery.
            changed = poll_fn(|cx| {
                if pushes == 0 {
                    // The page's turn: this branch waits one poll.
                    pushes = PUSHES_IN_A_ROW;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                match caught(|| match mounted.poll_push(cx) {
                    Poll::Ready(()) => Poll::Ready(rendered(mounted, tx, &limits)),
                    Poll::Pending => Poll::Pending,
                }) {
                    Ok(Poll::Pending) => {
                        pushes = PUSHES_IN_A_ROW;
                        Poll::Pending
                    }
                    Ok(Poll::Ready(changed)) => {
                        pushes -= 1;
                        Poll::Ready(Ok(changed))
                    }
                    Err(panicked) => Poll::Ready(Err(panicked)),
                }
            }) => changed?,
            message = rx.recv() => 'event: {
                let Some(message) = message else { return Ok(()) };
                let refused = match message {
                    // Over the rate: refused, but not counted as an error, so that a
                    // fast typist's page is slowed, never closed (its state would go).
                    FromPage::Text(_) if !rate.take() => Refused::Throttled,
                    FromPage::Text(text) => match decode_event::<V::Event>(text.as_bytes()) {
                        Ok(event) => break 'event caught(|| {
                            mounted.handle(event);
                            rendered(mounted, tx, &limits)
                        })?,
                        Err(error) => Refused::Invalid(error.to_string()),
                    },
                    FromPage::Other => Refused::Invalid("events are JSON text".to_owned()),
                    FromPage::TooLarge => return Err(Closing(CloseCode::MESSAGE_TOO_BIG, "event too large")),
                };
                let why = match refused {
                    Refused::Throttled => THROTTLED.to_owned(),
                    Refused::Invalid(why) => {
                        errors += 1;
                        if errors >= limits.max_errors {
                            return Err(Closing(CloseCode::POLICY_VIOLATION, "too many invalid events"));
                        }
                        why
                    }
                };
                // Told to the page, which may log it; the view is untouched. A page
                // that reads nothing misses replies rather than queueing them.
                let reply = serde_json::json!({ "error": why }).to_string();
                if let Err(Unsent::Closed) = tx.try_send(reply) {
                    return Ok(());
                }
                continue 'serve;
            },
            // Boxed when polled: a rare wait, kept out of every idle view's task.
            written = async { Box::pin(tx.flush()).await }, if dirty && backed_up => {
                if !written {
                    return Ok(());
                }
                continue;
            }
        };
        match changed {
            Some(diff) => {
                if !send(tx, &diff).await {
                    return Ok(());
                }
            }
            None => dirty = true,
        }
    }
}

/// What changed, rendered, unless the page is backed up (`None`: render it later).
fn rendered<V: LiveView>(mounted: &mut Mounted<V>, tx: &impl Outbox, limits: &Limits) -> Option<Diff> {
    (tx.queued() <= limits.max_unsent_bytes).then(|| mounted.rerender())
}

/// Runs the view's [`LiveView::disconnected`] once its page has gone: its push sources
/// stop, and the work the hook starts runs to its end (at most [`LEAVING`]), its
/// results handed to the view as usual.
async fn disconnected<V: LiveView>(mounted: &mut Mounted<V>) {
    let Ok(mut work) = caught(|| mounted.disconnect()) else { return };
    let _ = tokio::time::timeout(LEAVING, async {
        loop {
            let next = poll_fn(|cx| match caught(|| mounted.poll_leaving(&mut work, cx)) {
                Ok(Poll::Pending) if !work.is_idle() => Poll::Pending,
                Ok(_) => Poll::Ready(Ok(())),
                Err(panicked) => Poll::Ready(Err(panicked)),
            });
            if next.await.is_err() || work.is_idle() {
                return;
            }
        }
    })
    .await;
}

/// Runs a piece of the view's code; a panic in it ends the connection with 1011 (the
/// view's state may be half changed, so it is not used again).
fn caught<T>(f: impl FnOnce() -> T) -> Result<T, Closing> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| PANICKED)
}

/// Queues a diff (nothing when empty), for the connection to write out as it can;
/// false once the page has gone. The caller sends only while the queue holds at most
/// `max_unsent_bytes`, so only a diff larger than the whole queue waits.
async fn send(tx: &impl Outbox, diff: &Diff) -> bool {
    let Some(json) = diff.as_str().map(str::to_owned) else { return true };
    match tx.try_send(json) {
        Ok(()) => true,
        Err(Unsent::Full(json)) => tx.send(json).await,
        Err(Unsent::Closed) => false,
    }
}

/// A token bucket: `event_burst` events at once, refilled at `events_per_second`.
struct Rate {
    tokens: f64,
    burst: f64,
    per_second: f64,
    at: Instant,
}

impl Rate {
    fn new(limits: &Limits) -> Self {
        let burst = f64::from(limits.event_burst.max(1));
        Rate { tokens: burst, burst, per_second: f64::from(limits.events_per_second), at: Instant::now() }
    }

    /// Whether one more event may be taken now.
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.at).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + refill).min(self.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}
