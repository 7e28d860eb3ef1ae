//! A WebSocket's limits and timers, each with its default.

use std::time::Duration;

/// Largest frame payload by default: 1 MiB, as the message (1009 beyond).
pub const MAX_FRAME_BYTES: usize = 1 << 20;
/// Largest message by default, after decompression: 1 MiB (1009 beyond). Any client may
/// send one before the app has seen who it is, so the default is what a chat or a
/// live page needs, not what a file transfer does: between coder/websocket's 32 KiB
/// and tungstenite's 64 MiB, as reinhardt's 1 MB. A route that takes more says so
/// (`WebSocketUpgrade::max_message`).
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;
/// Bytes one worker's sockets may hold at once in messages being received
/// (reassembled and decompressed), by default: 64 MiB. A frame that would take the
/// total past it fails its socket with 1009, and the others go on: 64 clients each
/// sending 16 MiB cost a worker 64 MiB, not a gigabyte. A message counts from its
/// first frame until `recv` hands it over.
pub const WORKER_MESSAGE_BYTES: usize = 64 << 20;
/// Bytes queued for sending beyond which senders wait (`send`) or are refused
/// (`try_send`), by default: 1 MiB.
pub const MAX_QUEUE_BYTES: usize = 1 << 20;
/// How long a peer may take no byte of what we send before it is dropped, by default.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a silent peer is pinged by default; one that stays silent for another
/// interval is closed with 1011.
pub const HEARTBEAT: Duration = Duration::from_secs(30);
/// How long we wait for the peer's close frame after sending ours, by default.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// How one WebSocket behaves; [`Default`] gives the constants of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WsConfig {
    /// Largest frame payload; a longer frame fails the connection with 1009 before
    /// any of it is read.
    pub max_frame: usize,
    /// Largest message, reassembled and decompressed; 1009 beyond.
    pub max_message: usize,
    /// Bytes the worker's sockets may hold together in messages being received; a
    /// socket whose next frame would pass it is failed with 1009. Each socket checks
    /// the worker's one total against its own value.
    pub worker_message_bytes: usize,
    /// Bytes queued for sending before senders wait or are refused (see
    /// [`WsSender`](super::WsSender)).
    pub max_queue: usize,
    /// A peer that takes no byte of what we send for this long is dropped.
    pub send_timeout: Duration,
    /// Ping a peer silent for this long, and close (1011) one silent for twice as
    /// long; `None`: never (a dead peer then holds its socket until drain).
    pub heartbeat: Option<Duration>,
    /// How long the closing side waits for the other's close frame.
    pub close_timeout: Duration,
    /// Compress messages of at least this many bytes when permessage-deflate is on.
    pub compress_from: usize,
    /// Compression level, 0 to 9, when permessage-deflate is on.
    pub compression_level: u32,
}

impl Default for WsConfig {
    fn default() -> Self {
        WsConfig {
            max_frame: MAX_FRAME_BYTES,
            max_message: MAX_MESSAGE_BYTES,
            worker_message_bytes: WORKER_MESSAGE_BYTES,
            max_queue: MAX_QUEUE_BYTES,
            send_timeout: SEND_TIMEOUT,
            heartbeat: Some(HEARTBEAT),
            close_timeout: CLOSE_TIMEOUT,
            compress_from: 0,
            compression_level: 1,
        }
    }
}
