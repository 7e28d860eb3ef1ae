//! A live view's socket: one [`Mounted`] view per page, from the mount message to the
//! close. Each event from the page is decoded, checked against the view's
//! [`Limits`] and handled; each message the server pushes is delivered; after either,
//! the diff is sent. A page slow to read gets its changes coalesced: while more than
//! [`Limits::max_unsent_bytes`] wait to be written, the view changes without
//! rendering, and once the page has read, one diff from what it last got to the latest
//! state is sent, so a socket holds at most one pending state, never a queue. A panic
//! in the view ends its socket with 1011; the worker goes on.

use std::future::poll_fn;
use std::panic::{AssertUnwindSafe, catch_unwind};

use tokio::time::Instant;

use crate::live::diff::Diff;
use crate::live::event::decode_event;
use crate::live::limits::Limits;
use crate::live::mounted::Mounted;
use crate::live::view::LiveView;
use crate::ws::{CloseCode, Message, TrySendError, WebSocket, WsReceiver, WsSender};

/// How a socket ended, when the server ends it.
struct Closing(CloseCode, &'static str);

/// The view panicked.
const PANICKED: Closing = Closing(CloseCode::INTERNAL_ERROR, "the live view failed");
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
    if let Err(Closing(code, reason)) = serve(view, &tx, &mut rx).await {
        if tx.close(code, reason).await.is_ok() {
            // The close handshake runs while the receiver reads (RFC 6455 §7.1.2).
            while rx.recv().await.is_some() {}
        }
    }
}

async fn serve<V: LiveView>(view: V, tx: &WsSender, rx: &mut WsReceiver) -> Result<(), Closing> {
    let limits = V::LIMITS;
    let (mut mounted, mount) = caught(|| Mounted::connect(view))?;
    if !send(tx, &mount).await {
        return Ok(());
    }
    let mut rate = Rate::new(&limits);
    let mut errors = 0;
    // The view changed since the page was last sent a diff.
    let mut dirty = false;
    loop {
        let backed_up = tx.queued() > limits.max_unsent_bytes;
        if dirty && !backed_up {
            dirty = false;
            let diff = caught(|| mounted.rerender())?;
            if !send(tx, &diff).await {
                return Ok(());
            }
            continue;
        }
        tokio::select! {
            message = rx.recv() => {
                let Some(message) = message else { return Ok(()) };
                let refused = match message {
                    // Over the rate: refused, but not counted as an error, so that a
                    // fast typist's page is slowed, never closed (its state would go).
                    Message::Text(_) if !rate.take() => Refused::Throttled,
                    Message::Text(text) => match decode_event::<V::Event>(text.as_bytes()) {
                        Ok(event) => {
                            caught(|| mounted.handle(event))?;
                            dirty = true;
                            continue;
                        }
                        Err(error) => Refused::Invalid(error.to_string()),
                    },
                    Message::Binary(_) => Refused::Invalid("events are JSON text".to_owned()),
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
                if let Err(TrySendError::Closed(_)) = tx.try_send(reply) {
                    return Ok(());
                }
            }
            delivery = poll_fn(|cx| mounted.poll_push(cx)) => {
                caught(|| mounted.deliver(delivery))?;
                dirty = true;
            }
            written = tx.flush(), if dirty && backed_up => {
                if written.is_err() {
                    return Ok(());
                }
            }
        }
    }
}

/// Runs a piece of the view's code; a panic in it ends the socket with 1011 (the
/// view's state may be half changed, so it is not used again).
fn caught<T>(f: impl FnOnce() -> T) -> Result<T, Closing> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| PANICKED)
}

/// Queues a diff (nothing when empty), for the receiver to write out as it waits;
/// false once the socket is closed. The caller sends only while the queue holds at
/// most `max_unsent_bytes`, so only a diff larger than the socket's whole queue waits.
async fn send(tx: &WsSender, diff: &Diff) -> bool {
    let Some(json) = diff.to_json() else { return true };
    match tx.try_send(json) {
        Ok(()) => true,
        Err(TrySendError::Full(json)) => tx.send(json).await.is_ok(),
        Err(TrySendError::Closed(_)) => false,
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
