//! What a WebSocket carries for the application.

/// A whole data message (RFC 6455 §5.6), reassembled from its fragments and
/// decompressed. Pings are answered for you and pongs consumed; the close handshake
/// ends [`recv`](super::WsReceiver::recv) instead of arriving as a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A text message, checked to be UTF-8.
    Text(String),
    /// A binary message.
    Binary(Vec<u8>),
}

impl Message {
    /// The payload's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Message::Text(s) => s.as_bytes(),
            Message::Binary(b) => b,
        }
    }
}

impl Message {
    /// The payload's buffer.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self {
            Message::Text(s) => s.into_bytes(),
            Message::Binary(b) => b,
        }
    }
}

impl From<String> for Message {
    fn from(s: String) -> Self {
        Message::Text(s)
    }
}

impl From<&str> for Message {
    fn from(s: &str) -> Self {
        Message::Text(s.to_owned())
    }
}

impl From<Vec<u8>> for Message {
    fn from(b: Vec<u8>) -> Self {
        Message::Binary(b)
    }
}
