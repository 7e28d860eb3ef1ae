//! What the streams of one connection share with it: the worker, the peer, the
//! fields every response carries, and the counts that tell a flood from traffic.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;

use http::HeaderValue;

use super::meter::Meter;
use crate::worker::Worker;

/// Streams a peer may reset before they are answered, beyond one per stream answered,
/// before the connection is closed with `GOAWAY(ENHANCE_YOUR_CALM)`: a browser cancels
/// a few; the rapid-reset attack (2023) cancels every one, and each still costs the
/// server the work done until the reset arrived.
const RESET_ALLOWANCE: u64 = 200;

/// How a stream ended, for the connection's counts.
pub(super) enum Ended {
    /// The response was sent whole.
    Answered,
    /// The peer reset the stream (or the connection went) before the response was sent.
    Reset,
}

/// What the streams of one connection share with it.
pub(super) struct Shared {
    pub(super) worker: Rc<Worker>,
    pub(super) peer: SocketAddr,
    pub(super) hsts: Option<HeaderValue>,
    pub(super) meter: Rc<Meter>,
    /// The `date` field, kept while the worker's `Date` stays the same.
    date: RefCell<([u8; 29], HeaderValue)>,
    answered: Cell<u64>,
    resets: Cell<u64>,
    /// A response asked to close the connection (`Response::set_close`).
    close: Cell<bool>,
}

impl Shared {
    pub(super) fn new(worker: Rc<Worker>, peer: SocketAddr, hsts: Option<HeaderValue>, meter: Rc<Meter>) -> Self {
        let date = RefCell::new((worker.date(), date_value(worker.date())));
        let zero = || Cell::new(0);
        Shared { worker, peer, hsts, meter, date, answered: zero(), resets: zero(), close: Cell::new(false) }
    }

    /// The `date` field for a response now.
    pub(super) fn date(&self) -> HeaderValue {
        let now = self.worker.date();
        let mut date = self.date.borrow_mut();
        if date.0 != now {
            *date = (now, date_value(now));
        }
        date.1.clone()
    }

    /// Counts a stream's end.
    pub(super) fn ended(&self, ended: Ended) {
        let count = match ended {
            Ended::Answered => &self.answered,
            Ended::Reset => &self.resets,
        };
        count.set(count.get() + 1);
    }

    /// Asks for a graceful `GOAWAY` once the streams in flight are answered.
    pub(super) fn close_after(&self) {
        self.close.set(true);
    }

    /// Whether a response asked to close the connection.
    pub(super) fn closing(&self) -> bool {
        self.close.get()
    }

    /// Whether the peer resets far more streams than it lets be answered.
    pub(super) fn reset_flood(&self) -> bool {
        self.resets.get() > RESET_ALLOWANCE + self.answered.get()
    }
}

fn date_value(date: [u8; 29]) -> HeaderValue {
    HeaderValue::from_bytes(&date).unwrap_or(HeaderValue::from_static(""))
}
