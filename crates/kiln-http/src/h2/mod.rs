//! HTTP/2 (RFC 9113): h2 by ALPN over TLS and h2c with prior knowledge on the plain
//! port, on the `h2` crate (framing, HPACK, flow control; fuzzed and h2spec-clean).
//!
//! A connection is one task on its worker, like an HTTP/1.1 one: [`conn`] drives the
//! `h2` connection and polls every stream of it in the same task (no spawn per stream,
//! no hand-off between threads). Each stream ([`stream`]) is served with the same
//! [`Request`](crate::Request) view and [`Response`](crate::Response) as HTTP/1.1: its
//! method, target and headers are written into a buffer of its own ([`request`]), the
//! response's header lines become HPACK fields ([`encode`]) and its body leaves as the
//! peer's flow-control window allows ([`send`]). [`preface`] tells h2c from HTTP/1 on
//! the plain port; [`meter`] counts what a peer sends, against floods.

mod conn;
mod encode;
mod meter;
mod preface;
mod request;
mod send;
mod shared;
mod stream;
mod upload;

pub(crate) use conn::serve;
pub(crate) use preface::{Wire, refuse, sniff};
