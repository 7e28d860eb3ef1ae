//! HTTP/1.1 (RFC 9112): the connection loop and what only it needs.
//!
//! [`conn`] reads requests into one buffer and answers them in order (pipelined
//! responses leave in one write); [`parse`] checks a head in place with `httparse`;
//! [`chunked`] decodes chunked bodies; [`encode`] writes status lines and headers;
//! [`sendfile`] sends file bodies without copying them through user space; [`turns`]
//! makes pipelining connections take turns with the worker's others. HTTP/2
//! sits beside this module in `h2`; both serve the same [`Request`](crate::Request)
//! and [`Response`](crate::Response), and neither imports the other.

pub(crate) mod chunked;
pub(crate) mod conn;
pub(crate) mod encode;
pub(crate) mod parse;
mod sendfile;
pub(crate) mod turns;
