//! Whose budget a request spends: its client address, its bearer token's subject, or a
//! key the app computes.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;

use kiln_http::{Request, TrustedProxies};

use super::table::Table;
use crate::key::Key;
use crate::security::BearerToken;

/// An app's key function, with the key hashed by the table it is for.
pub(super) type CustomKey = dyn Fn(&Request<'_>, &Table) -> Option<u64> + Send + Sync;

/// How a limit keys requests.
#[derive(Clone)]
pub(super) enum KeyBy {
    ClientAddr,
    BearerSubject,
    Custom(Arc<CustomKey>),
}

/// What the app knows that keying may need.
pub(crate) struct Keying<'a> {
    pub(crate) trusted_proxies: &'a TrustedProxies,
    /// The app's secret key, which checks bearer tokens.
    pub(crate) secret: Option<&'a Key>,
}

impl KeyBy {
    /// The hash of the request's key in `table`; `None`: the request is not limited.
    pub(super) fn hash(&self, req: &Request<'_>, table: &Table, keying: &Keying<'_>) -> Option<u64> {
        let client = || client_prefix(keying.trusted_proxies.client_ip(req));
        match self {
            KeyBy::ClientAddr => Some(table.hash(&client())),
            // Tagged apart, so that no subject can be spelt to share an address's cells.
            KeyBy::BearerSubject => match keying.secret.and_then(|key| BearerToken::from_header(key, req).ok()) {
                Some(token) => Some(table.hash(&("subject", token.subject()))),
                None => Some(table.hash(&("address", client()))),
            },
            KeyBy::Custom(key) => key(req, table),
        }
    }

    /// Whether keying needs the app's secret key.
    pub(super) fn needs_secret(&self) -> bool {
        matches!(self, KeyBy::BearerSubject)
    }
}

impl fmt::Debug for KeyBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyBy::ClientAddr => "client address",
            KeyBy::BearerSubject => "bearer subject",
            KeyBy::Custom(_) => "the app's key function",
        })
    }
}

/// The part of an address that names a client: an IPv4 address whole, an IPv6 one by
/// its `/64`. RFC 4291 §2.5.4 gives the low 64 bits to the interface, which picks
/// them as it likes (RFC 8981's temporary addresses): one host holds 2^64 addresses,
/// and must not get 2^64 budgets.
pub(super) fn client_prefix(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(v6.to_bits() & !u128::from(u64::MAX))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_ipv4_its_address() {
        let table = [
            ("203.0.113.7", "203.0.113.7"),
            ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::"),
            ("2001:db8:1:2::1", "2001:db8:1:2::"),
            ("::ffff:198.51.100.4", "198.51.100.4"),
        ];
        for (ip, client) in table {
            assert_eq!(client_prefix(ip.parse().unwrap()), client.parse::<IpAddr>().unwrap(), "{ip}");
        }
    }
}
