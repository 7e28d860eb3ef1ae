//! [`ClientAddr`]: who sent the request, as far as the deployment can tell.

use std::net::IpAddr;

use crate::extract::{FromRequest, RequestContext};
use crate::rejection::Rejection;

/// The client's address: the connection's peer — already the client a PROXY protocol
/// header named, when the server takes that header from a trusted proxy — or, when the
/// peer is one of the app's [trusted proxies](crate::App::trusted_proxies), the client
/// that proxy names in `Forwarded` or `X-Forwarded-For` (see
/// [`TrustedProxies::client_ip`](kiln_http::TrustedProxies::client_ip)). From anyone
/// else those headers are ignored: a client can write any header. The access log
/// records the same address. Costs nothing unless a handler asks for it.
///
/// ```
/// use kiln::{App, ClientAddr, Route, test::TestClient};
///
/// #[derive(Route)]
/// #[route(GET, "/ip")]
/// struct Ip;
///
/// async fn ip(_: Ip, ClientAddr(client): ClientAddr) -> String {
///     client.to_string()
/// }
///
/// // The test client's peer is 127.0.0.1: trusted here, so its header is believed.
/// let trusted = "127.0.0.1".parse().unwrap();
/// let mut client = TestClient::new(App::new(|_| ()).trusted_proxies(trusted).route(ip));
/// let res = client.request("GET", &Ip).header("X-Forwarded-For", "203.0.113.7").send();
/// assert_eq!(res.text(), "203.0.113.7");
///
/// let mut client = TestClient::new(App::new(|_| ()).route(ip));
/// let res = client.request("GET", &Ip).header("X-Forwarded-For", "203.0.113.7").send();
/// assert_eq!(res.text(), "127.0.0.1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

impl<S> FromRequest<S> for ClientAddr {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(ClientAddr(cx.config().trusted_proxies.client_ip(&cx.request())))
    }
}
