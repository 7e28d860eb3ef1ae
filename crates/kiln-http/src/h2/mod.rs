//! HTTP/2 (RFC 9113): h2 by ALPN over TLS and h2c with prior knowledge on the plain
//! port, on kiln's own engine: its own frames, flow control and HPACK decoding, as its
//! HTTP/1.1 engine is its own.
//!
//! A connection is one task on its worker, like an HTTP/1.1 one: [`engine`] reads
//! frames straight from the connection's read buffer ([`frame`]), keeps its streams in
//! a small slab, calls the service for every request made whole in the same task (no
//! spawn per stream, no hand-off between threads, no lock) and writes responses straight
//! into one write buffer, one system call per batch of ready streams. Each stream is
//! served with the same [`Request`](crate::Request) view and
//! [`Response`](crate::Response) as HTTP/1.1: its method, target and fields are decoded
//! ([`hpack`]) into a buffer of its own ([`fields`]); the response's header lines become
//! an HPACK block ([`response_head`]). [`preface`] tells h2c from HTTP/1 on the plain
//! port; [`meter`] counts what a peer sends, against floods.

mod engine;
mod fields;
mod frame;
mod hpack;
mod meter;
mod preface;
mod response_head;

#[cfg(feature = "fuzzing")]
pub(crate) use engine::fuzz::frames as fuzz_frames;
pub(crate) use engine::serve;
pub(crate) use preface::{Wire, refuse, sniff};
pub(crate) use response_head::Memo as HeadMemo;
