//! WebSocket on a typed route: the [`WebSocketUpgrade`] extractor checks the handshake
//! and negotiates permessage-deflate; the socket itself is the engine's
//! ([`kiln_http::ws`]), re-exported here.

mod handshake;
mod upgrade;

pub use kiln_http::ws::{
    CloseCode, CloseFrame, DeflateConfig, Message, SendError, TrySendError, WebSocket, WsConfig, WsReceiver, WsSender,
};
pub use upgrade::{WebSocketResponse, WebSocketUpgrade};
