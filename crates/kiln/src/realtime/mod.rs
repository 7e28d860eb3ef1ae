//! Real time: responses that stay open and push to the browser.
//!
//! - [`Sse`]: Server-Sent Events from a stream of [`Event`]s, with keep-alive comments,
//!   ending cleanly when the server drains; [`LastEventId`] lets a reconnecting browser
//!   resume where it stopped.
//! - [`Bus`]: topics that handlers publish to and subscribe to, across the workers of
//!   the process without locks on the request path, and across processes through
//!   PostgreSQL `LISTEN`/`NOTIFY` (`Bus::postgres`, feature `postgres`); bounded
//!   per topic, a slow subscriber told it [`Lagged`], a reconnect replayed from the
//!   window.
//!
//! Every long-lived response here ends on [`kiln_http::draining`], so a shutdown never
//! waits for them through its grace period.

mod bus;
mod sse;

pub(crate) use bus::LAGGED_MESSAGES;
#[cfg(feature = "postgres")]
pub use bus::PostgresBus;
pub use bus::{BUS_WINDOW, Bus, BusEvents, Lagged, LocalBus, MAX_TOPIC_BYTES, Message, PublishError, Subscription};
pub use futures_core::Stream;
pub use kiln_http::{Drain, draining};
pub use sse::{Event, LastEventId, SSE_KEEP_ALIVE, Sse};
