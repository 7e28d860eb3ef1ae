//! A connection's start-up, before HTTP is spoken: the PROXY protocol header, the TLS
//! handshake, and the choice between HTTP/1.1 and HTTP/2.

use std::future::Future;
use std::net::SocketAddr;
use std::rc::Rc;

use crate::proxy_protocol;
use crate::service::Service;
use crate::trusted_proxies::TrustedProxies;
use crate::worker::Worker;

/// What a connection's start-up needs, shared by a worker's connections: each step of
/// [`start`] keeps its settings here.
pub(super) struct Startup {
    /// The trusted proxies, when connections open with a PROXY protocol header.
    pub(super) proxy: Option<TrustedProxies>,
    #[cfg(feature = "tls")]
    pub(super) tls: Option<crate::tls::Acceptor>,
}

/// A connection's start-up, one step after the other, before HTTP is spoken:
/// 1. the PROXY protocol header, when configured, which names the real client;
/// 2. the TLS handshake, when configured, whose ALPN picks HTTP/2 or HTTP/1.1;
///    on a plain connection, its first bytes do: the HTTP/2 preface or a request line;
/// 3. HTTP/1.1 ([`crate::h1::conn::serve`]) or HTTP/2 ([`crate::h2::serve`]) until the
///    connection closes.
///
/// A step that refuses the connection returns its slot and drops the stream, which
/// closes it; nothing after a refused step reads from it.
///
/// Not an `async fn`: an async fn's arguments stay in its future beside the locals
/// they are moved into, and this future lives as long as the connection.
#[allow(clippy::manual_async_fn)]
pub(super) fn start<S: Service>(
    mut stream: tokio::net::TcpStream,
    mut peer: SocketAddr,
    service: Rc<S>,
    worker: Rc<Worker>,
    startup: Rc<Startup>,
    slot: usize,
) -> impl Future<Output = ()> {
    async move {
        // The client the header names replaces the peer in place (a second address
        // would stay in the future for the connection's whole life). Boxed: the
        // header's read buffer lives only while it is read.
        if let Some(trusted) = &startup.proxy {
            match Box::pin(proxy_protocol::accept(&mut stream, peer, trusted, worker.limits.header_timeout)).await {
                Ok(client) => peer = client,
                Err(_) => return worker.close_connection(slot),
            }
        }
        #[cfg(feature = "tls")]
        if let Some(tls) = &startup.tls {
            // Boxed: a TLS connection's state (the handshake, then rustls' connection) is
            // some 4 KiB; unboxed, it would sit in every connection's future, TLS or not
            // (a never-used plain connection cost 5.9 KiB instead of under 4).
            return Box::pin(async move {
                match tls.accept(stream).await {
                    Some(stream) if stream.is_h2() => crate::h2::serve(stream, peer, service, worker, slot).await,
                    Some(stream) => crate::h1::conn::serve(stream, peer, service, worker, slot).await,
                    None => worker.close_connection(slot),
                }
            })
            .await;
        }
        // Both boxed: a task's future is as large as its largest branch, though only one
        // runs. With HTTP/1.1's state unboxed, every idle HTTP/2 connection carried some
        // 1.9 KiB of it unused beside its own (4.9 KiB per idle h2c connection in all);
        // with HTTP/2's unboxed, every HTTP/1.1 connection would carry HTTP/2's.
        // Boxed too, as the refusal below: the first look's timers would otherwise stay in
        // every connection's task for its whole life.
        match Box::pin(crate::h2::sniff(&stream, &worker, slot)).await {
            crate::h2::Wire::Http1 => Box::pin(crate::h1::conn::serve(stream, peer, service, worker, slot)).await,
            crate::h2::Wire::Http2 => Box::pin(crate::h2::serve(stream, peer, service, worker, slot)).await,
            crate::h2::Wire::Neither => {
                Box::pin(crate::h2::refuse(stream)).await;
                worker.close_connection(slot);
            }
            crate::h2::Wire::Closed => worker.close_connection(slot),
        }
    }
}
