//! What one live view's socket may take and hold: each limit named, with its default.

use std::time::Duration;

/// Largest event a page may send, in bytes; a larger message closes the socket with
/// 1009 (the socket's own message limit, checked before the message is kept).
pub const MAX_EVENT_BYTES: usize = 64 << 10;
/// Events a page may send at once, beyond its steady rate.
pub const EVENT_BURST: u32 = 50;
/// Events per second a page may send, steadily; one over the rate is refused (an
/// error reply; the socket stays open).
pub const EVENTS_PER_SECOND: u32 = 25;
/// Invalid events (malformed, not of the view's type) after which the socket closes
/// with 1008; each one before is answered with an error.
pub const MAX_ERRORS: u32 = 3;
/// Bytes of updates written and not yet taken by the page beyond which the view
/// stops sending: further changes are coalesced into one diff, sent when the page
/// has read.
pub const MAX_UNSENT_BYTES: usize = 64 << 10;
/// How long the token of a page lets it connect (and reconnect) its socket.
pub const TOKEN_TTL: Duration = Duration::from_secs(4 * 60 * 60);

/// The limits of one live view's sockets; a view sets its own with
/// [`LiveView::LIMITS`](crate::live::LiveView::LIMITS):
///
/// ```
/// use kiln::live::Limits;
///
/// const LIMITS: Limits = Limits { max_event_bytes: 1024, ..Limits::DEFAULT };
/// assert_eq!(LIMITS.max_errors, kiln::live::MAX_ERRORS);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest event, in bytes ([`MAX_EVENT_BYTES`]).
    pub max_event_bytes: usize,
    /// Events at once beyond the rate ([`EVENT_BURST`]).
    pub event_burst: u32,
    /// Events per second, steadily ([`EVENTS_PER_SECOND`]).
    pub events_per_second: u32,
    /// Invalid events before the socket closes ([`MAX_ERRORS`]).
    pub max_errors: u32,
    /// Unsent bytes beyond which updates are coalesced ([`MAX_UNSENT_BYTES`]).
    pub max_unsent_bytes: usize,
    /// How long a page's token is good for ([`TOKEN_TTL`]).
    pub token_ttl: Duration,
}

impl Limits {
    /// The defaults: the constants of this module.
    pub const DEFAULT: Limits = Limits {
        max_event_bytes: MAX_EVENT_BYTES,
        event_burst: EVENT_BURST,
        events_per_second: EVENTS_PER_SECOND,
        max_errors: MAX_ERRORS,
        max_unsent_bytes: MAX_UNSENT_BYTES,
        token_ttl: TOKEN_TTL,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
