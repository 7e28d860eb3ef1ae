//! WebSocket (RFC 6455) on an upgraded connection, with permessage-deflate (RFC 7692,
//! feature `ws-deflate`): an HTTP/1.1 connection after its `101`, or an HTTP/2 stream
//! after an extended CONNECT's `200` (RFC 8441; the engine's `h2::engine::tunnel` makes
//! the stream a byte stream both ways).
//!
//! The handshake is the framework's: it answers `101` with
//! [`Response::set_upgrade`](crate::Response::set_upgrade) and, in the callback, makes
//! a [`WebSocket`] from the [`Upgraded`](crate::Upgraded) connection.
//!
//! - `frame`: frame headers, masking; `close`: close codes and payloads;
//!   `utf8`: incremental validation; `deflate`: negotiation and (de)compression;
//! - `readbuf`: input lent a buffer only while there is some, so idle sockets hold none;
//! - `spare`: small message buffers reused once sent;
//! - `sender`: the bounded output queue; `receiver`: reading, reassembly (within the
//!   worker's budget for messages being received), control frames, heartbeat and
//!   close; `socket`: both together.

mod close;
mod config;
mod deflate;
mod frame;
mod message;
mod readbuf;
mod receiver;
mod sender;
mod socket;
mod spare;
mod utf8;

pub use close::{CloseCode, CloseFrame};
pub use config::{
    CLOSE_TIMEOUT, HEARTBEAT, MAX_FRAME_BYTES, MAX_MESSAGE_BYTES, MAX_QUEUE_BYTES, SEND_TIMEOUT, WORKER_MESSAGE_BYTES,
    WsConfig,
};
pub use deflate::{DeflateConfig, DeflateParams, negotiate as negotiate_deflate};
pub use message::Message;
pub use receiver::{WsReceiver, worker_message_bytes};
pub use sender::{SendError, TrySendError, WsSender};
pub use socket::WebSocket;
