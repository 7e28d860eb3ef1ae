//! The proxies a deployment trusts to tell it who the client is: by the PROXY protocol
//! header they send first, or by the `Forwarded` / `X-Forwarded-For` headers they add.
//! Nobody else is believed: a client can write any header it likes.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;

use crate::request::Request;

/// A set of address ranges (`10.0.0.0/8`, `::1/128`, a bare address) whose connections
/// may name the real client.
///
/// ```
/// use kiln_http::TrustedProxies;
/// let trusted: TrustedProxies = "127.0.0.3/32, 10.0.0.0/8".parse().unwrap();
/// assert!(trusted.contains("10.1.2.3".parse().unwrap()));
/// assert!(!trusted.contains("127.0.0.1".parse().unwrap()));
/// assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    ranges: Arc<[Cidr]>,
}

/// One address range.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u32::from(net).into(), 32, self.prefix) == masked(u32::from(ip).into(), 32, self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(net), 128, self.prefix) == masked(u128::from(ip), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn masked(bits: u128, width: u8, prefix: u8) -> u128 {
    if prefix == 0 { 0 } else { bits >> (width - prefix) }
}

/// An IPv4 address reached over IPv6 (`::ffff:10.0.0.1`) is matched as IPv4, so that a
/// dual-stack listener trusts `10.0.0.0/8` as written.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Why a list of trusted proxies did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidCidr(String);

impl fmt::Display for InvalidCidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an address or CIDR range: `{}`", self.0)
    }
}

impl std::error::Error for InvalidCidr {}

impl FromStr for TrustedProxies {
    type Err = InvalidCidr;

    /// A comma-separated list of addresses and CIDR ranges; empty trusts nobody.
    fn from_str(s: &str) -> Result<Self, InvalidCidr> {
        let mut ranges = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = || InvalidCidr(item.to_owned());
            let (addr, prefix) = item.split_once('/').map_or((item, None), |(a, p)| (a, Some(p)));
            let network = canonical(addr.parse::<IpAddr>().map_err(|_| bad())?);
            let width = if network.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                None => width,
                Some(p) => p.parse::<u8>().ok().filter(|p| *p <= width).ok_or_else(bad)?,
            };
            ranges.push(Cidr { network, prefix });
        }
        Ok(TrustedProxies { ranges: ranges.into() })
    }
}

impl fmt::Debug for TrustedProxies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.ranges.iter().map(|c| format!("{}/{}", c.network, c.prefix))).finish()
    }
}

impl TrustedProxies {
    /// Trusts nobody: the socket's peer is the client.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether no range is trusted.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether `ip` is in a trusted range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.ranges.iter().any(|c| c.contains(ip))
    }

    /// The real client of `req`: the connection's peer (already the PROXY protocol's
    /// client when the server takes that header), unless the peer is a trusted proxy;
    /// then the rightmost address of `Forwarded` (RFC 7239), or else of
    /// `X-Forwarded-For`, that is not itself a trusted proxy. Addresses left of it were
    /// written by whoever reached that hop and prove nothing. An entry that is not an
    /// address (`unknown`, an obfuscated name) stops the walk at the last hop known.
    ///
    /// ```
    /// # use kiln_http::{RequestBytes, TrustedProxies};
    /// let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
    /// let raw = b"GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 6.6.6.6, 203.0.113.9, 10.0.0.7\r\n\r\n";
    /// let from_proxy = RequestBytes::parse(raw.to_vec(), "10.0.0.2:5000".parse().unwrap()).unwrap();
    /// assert_eq!(trusted.client_ip(&from_proxy.request()).to_string(), "203.0.113.9");
    /// let from_client = RequestBytes::parse(raw.to_vec(), "198.51.100.4:5000".parse().unwrap()).unwrap();
    /// assert_eq!(trusted.client_ip(&from_client.request()).to_string(), "198.51.100.4");
    /// ```
    pub fn client_ip(&self, req: &Request<'_>) -> IpAddr {
        let peer = req.peer_addr().ip();
        if !self.contains(peer) {
            return peer;
        }
        let forwarded = req.headers().filter(|(n, _)| n.eq_ignore_ascii_case("forwarded")).map(|(_, v)| v);
        let hops: Vec<Option<IpAddr>> = forwarded.flat_map(split_list).map(forwarded_for).collect();
        let hops = if hops.is_empty() {
            let xff = req.headers().filter(|(n, _)| n.eq_ignore_ascii_case("x-forwarded-for")).map(|(_, v)| v);
            xff.flat_map(split_list).map(|e| parse_node(e.trim_ascii())).collect()
        } else {
            hops
        };
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            match hop {
                Some(ip) if self.contains(ip) => client = ip,
                Some(ip) => return ip,
                None => break,
            }
        }
        client
    }
}

/// The comma-separated elements of one header value.
fn split_list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|b| *b == b',').filter(|e| !e.trim_ascii().is_empty())
}

/// The `for=` node of one `Forwarded` element (RFC 7239 §4); `None` when it has none
/// or it is not an address.
fn forwarded_for(element: &[u8]) -> Option<IpAddr> {
    element.split(|b| *b == b';').find_map(|pair| {
        let pair = pair.trim_ascii();
        let (name, value) = pair.split_at(pair.iter().position(|b| *b == b'=')?);
        name.eq_ignore_ascii_case(b"for").then(|| parse_node(value[1..].trim_ascii())).flatten()
    })
}

/// An address as a proxy writes it: `192.0.2.1`, `2001:db8::1`, quoted, in brackets, or
/// with a port (RFC 7239 §6: `"[2001:db8::1]:4711"`, `"192.0.2.1:80"`).
fn parse_node(node: &[u8]) -> Option<IpAddr> {
    let node = std::str::from_utf8(node).ok()?;
    let node = node.strip_prefix('"').and_then(|n| n.strip_suffix('"')).unwrap_or(node);
    if let Ok(ip) = node.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']').and_then(|(ip, _)| ip.parse().ok()).map(canonical);
    }
    node.rsplit_once(':').and_then(|(ip, _)| ip.parse().ok()).map(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestBytes;

    fn client(trusted: &str, peer: &str, headers: &str) -> String {
        let raw = format!("GET / HTTP/1.1\r\nHost: a\r\n{headers}\r\n");
        let req = RequestBytes::parse(raw.into_bytes(), peer.parse().unwrap()).unwrap();
        trusted.parse::<TrustedProxies>().unwrap().client_ip(&req.request()).to_string()
    }

    #[test]
    fn forwarded_headers_are_believed_only_from_a_trusted_peer() {
        let cases = [
            // (trusted, peer, headers, client)
            ("", "127.0.0.1:1", "X-Forwarded-For: 6.6.6.6\r\n", "127.0.0.1"),
            ("10.0.0.0/8", "192.0.2.1:1", "X-Forwarded-For: 6.6.6.6\r\n", "192.0.2.1"),
            ("10.0.0.0/8", "192.0.2.1:1", "Forwarded: for=6.6.6.6\r\n", "192.0.2.1"),
            ("10.0.0.0/8", "10.0.0.1:1", "X-Forwarded-For: 6.6.6.6\r\n", "6.6.6.6"),
            ("10.0.0.0/8", "10.0.0.1:1", "X-Forwarded-For: 1.1.1.1, 2.2.2.2, 10.0.0.9\r\n", "2.2.2.2"),
            ("10.0.0.0/8", "10.0.0.1:1", "X-Forwarded-For: 1.1.1.1\r\nX-Forwarded-For: 2.2.2.2\r\n", "2.2.2.2"),
            ("10.0.0.0/8", "10.0.0.1:1", "X-Forwarded-For: 10.0.0.5, 10.0.0.9\r\n", "10.0.0.5"),
            ("10.0.0.0/8", "10.0.0.1:1", "X-Forwarded-For: 1.1.1.1, garbage, 10.0.0.9\r\n", "10.0.0.9"),
            ("10.0.0.0/8", "10.0.0.1:1", "", "10.0.0.1"),
            ("10.0.0.0/8", "10.0.0.1:1", "Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43\r\n", "192.0.2.60"),
            ("10.0.0.0/8", "10.0.0.1:1", "Forwarded: for=\"[2001:db8:cafe::17]:4711\"\r\n", "2001:db8:cafe::17"),
            ("10.0.0.0/8", "10.0.0.1:1", "Forwarded: For=\"192.0.2.1:80\", for=10.1.1.1\r\n", "192.0.2.1"),
            ("10.0.0.0/8", "10.0.0.1:1", "Forwarded: for=unknown\r\n", "10.0.0.1"),
            // `Forwarded` wins over `X-Forwarded-For` when both are present.
            ("10.0.0.0/8", "10.0.0.1:1", "Forwarded: for=7.7.7.7\r\nX-Forwarded-For: 8.8.8.8\r\n", "7.7.7.7"),
            ("::1", "[::1]:1", "X-Forwarded-For: 2001:db8::2\r\n", "2001:db8::2"),
            ("127.0.0.0/8", "[::ffff:127.0.0.1]:1", "X-Forwarded-For: 9.9.9.9\r\n", "9.9.9.9"),
        ];
        for (trusted, peer, headers, want) in cases {
            assert_eq!(client(trusted, peer, headers), want, "{trusted} {peer} {headers:?}");
        }
    }

    #[test]
    fn ranges_parse_and_match() {
        let t: TrustedProxies = "10.0.0.0/8,::1, 192.168.1.7/32, 0.0.0.0/0".parse().unwrap();
        assert!(t.contains("10.255.0.1".parse().unwrap()));
        assert!(t.contains("::1".parse().unwrap()));
        assert!(t.contains("8.8.8.8".parse().unwrap()));
        assert!(!t.contains("2001:db8::1".parse().unwrap()));
        for bad in ["10.0.0.0/", "10.0.0/8", "::1/129", "host.example", "10.0.0.0/-1"] {
            assert!(bad.parse::<TrustedProxies>().is_err(), "{bad}");
        }
        assert!("".parse::<TrustedProxies>().unwrap().is_empty());
    }
}
