//! Real time: responses that stay open and push to the browser.
//!
//! - [`Sse`]: Server-Sent Events from a stream of [`Event`]s, with keep-alive comments,
//!   ending cleanly when the server drains; [`LastEventId`] lets a reconnecting browser
//!   resume where it stopped.
//!
//! Every long-lived response here ends on [`kiln_http::draining`], so a shutdown never
//! waits for them through its grace period.

mod sse;

pub use futures_core::Stream;
pub use kiln_http::{Drain, draining};
pub use sse::{Event, LastEventId, SSE_KEEP_ALIVE, Sse};
