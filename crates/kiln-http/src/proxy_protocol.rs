//! The PROXY protocol, versions 1 (text) and 2 (binary), as HAProxy specifies it
//! (<https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt>): a load balancer
//! opens each connection with one header naming the client it relays.
//!
//! A header is believed only from a trusted proxy, and a trusted proxy must send one
//! (§2: a receiver must not guess whether a header is there). Any other peer that opens
//! with a header is refused, so that a client cannot pass for another. The header is
//! read without reading past it (peeked, then consumed exactly), within a size bound
//! and the header timeout; whatever follows is the first request's bytes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use crate::trusted_proxies::TrustedProxies;

/// Longest version 1 header, `\r\n` included (§2.1).
pub(crate) const MAX_V1_BYTES: usize = 107;
/// Largest version 2 address block and TLVs accepted after the 16-byte fixed part:
/// room for IPv6 addresses and the TLVs HAProxy sends, and no more.
pub(crate) const MAX_V2_PAYLOAD: usize = 1024;
/// How long a peer whose first bytes could still become a header is waited for
/// between looks: only a client that sends `PRO` and stops ever waits.
const PREFIX_POLL: Duration = Duration::from_millis(5);

const V1_SIGNATURE: &[u8] = b"PROXY ";
const V2_SIGNATURE: &[u8] = b"\r\n\r\n\0\r\nQUIT\n";
const V2_FIXED: usize = 16;
const MAX_HEADER: usize = V2_FIXED + MAX_V2_PAYLOAD;

/// Why a connection was refused before HTTP.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not a well-formed header, or too long.
    Malformed,
    /// A header from a peer that is not a trusted proxy.
    Untrusted,
    /// A trusted proxy sent no header, or closed, or took longer than the timeout.
    Missing,
}

/// A complete header: its length, and the client it names (`None`: keep the socket's
/// peer, for `LOCAL`, `UNKNOWN` and non-TCP families).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) len: usize,
    pub(crate) client: Option<SocketAddr>,
}

/// Parses a header from the start of `buf`: `Ok(None)` when more bytes are needed.
pub(crate) fn parse(buf: &[u8]) -> Result<Option<Header>, Refused> {
    if buf.len() < V1_SIGNATURE.len() && V1_SIGNATURE.starts_with(buf) {
        // Too short to tell a version 1 header from a malformed one yet.
        return Ok(None);
    }
    if buf.starts_with(V1_SIGNATURE) {
        return parse_v1(buf);
    }
    let seen = buf.len().min(V2_SIGNATURE.len());
    if buf[..seen] != V2_SIGNATURE[..seen] {
        return Err(Refused::Malformed);
    }
    parse_v2(buf)
}

/// Whether `buf` begins (or could still begin) a header: for peers that may not send one.
pub(crate) fn looks_like_header(buf: &[u8]) -> Option<bool> {
    let could = |sig: &[u8]| {
        let seen = buf.len().min(sig.len());
        buf[..seen] == sig[..seen]
    };
    match (could(V1_SIGNATURE), could(V2_SIGNATURE)) {
        (false, false) => Some(false),
        (true, _) if buf.len() >= V1_SIGNATURE.len() => Some(true),
        (_, true) if buf.len() >= V2_SIGNATURE.len() => Some(true),
        _ => None,
    }
}

/// `PROXY TCP4 <src> <dst> <sport> <dport>\r\n`, `TCP6` alike, or `PROXY UNKNOWN...\r\n`.
fn parse_v1(buf: &[u8]) -> Result<Option<Header>, Refused> {
    let window = &buf[..buf.len().min(MAX_V1_BYTES)];
    let Some(end) = window.windows(2).position(|w| w == b"\r\n") else {
        return if buf.len() >= MAX_V1_BYTES { Err(Refused::Malformed) } else { Ok(None) };
    };
    let line = std::str::from_utf8(&buf[V1_SIGNATURE.len()..end]).map_err(|_| Refused::Malformed)?;
    let len = end + 2;
    let fields: Vec<&str> = line.split(' ').collect();
    let client = match fields.as_slice() {
        ["UNKNOWN", ..] => None,
        [proto @ ("TCP4" | "TCP6"), src, dst, sport, dport] => {
            let (src, dst) = (src.parse::<IpAddr>(), dst.parse::<IpAddr>());
            let (Ok(src), Ok(dst)) = (src, dst) else { return Err(Refused::Malformed) };
            let v4 = *proto == "TCP4";
            if src.is_ipv4() != v4 || dst.is_ipv4() != v4 {
                return Err(Refused::Malformed);
            }
            let port = |p: &str| p.parse::<u16>().ok().filter(|_| p.bytes().all(|b| b.is_ascii_digit()));
            let (Some(sport), Some(_)) = (port(sport), port(dport)) else { return Err(Refused::Malformed) };
            Some(SocketAddr::new(src, sport))
        }
        _ => return Err(Refused::Malformed),
    };
    Ok(Some(Header { len, client }))
}

/// The 16-byte fixed part (signature, version and command, family, length), then the
/// addresses and TLVs (§2.2).
fn parse_v2(buf: &[u8]) -> Result<Option<Header>, Refused> {
    if buf.len() < V2_FIXED {
        return Ok(None);
    }
    let (version, command) = (buf[12] >> 4, buf[12] & 0x0f);
    let family = buf[13];
    let payload = usize::from(u16::from_be_bytes([buf[14], buf[15]]));
    if version != 2 || command > 1 || payload > MAX_V2_PAYLOAD {
        return Err(Refused::Malformed);
    }
    let needed = match family {
        0x00 => 0,
        0x11 | 0x12 => 12,
        0x21 | 0x22 => 36,
        0x31 | 0x32 => 216,
        _ => return Err(Refused::Malformed),
    };
    if payload < needed {
        return Err(Refused::Malformed);
    }
    let len = V2_FIXED + payload;
    if buf.len() < len {
        return Ok(None);
    }
    let a = &buf[V2_FIXED..len];
    let port = |at: usize| u16::from_be_bytes([a[at], a[at + 1]]);
    // LOCAL (command 0): the proxy's own connection, a health check; keep the peer.
    let client = match (command, family) {
        (1, 0x11) => Some(SocketAddr::new(Ipv4Addr::new(a[0], a[1], a[2], a[3]).into(), port(8))),
        (1, 0x21) => {
            let src: [u8; 16] = a[..16].try_into().map_err(|_| Refused::Malformed)?;
            Some(SocketAddr::new(Ipv6Addr::from(src).into(), port(32)))
        }
        _ => None,
    };
    Ok(Some(Header { len, client }))
}

/// Reads the header a connection opens with, when the server takes the PROXY protocol:
/// the client it names (or `peer`), or why the connection is refused. Bounded by
/// `timeout` in all.
pub(crate) async fn accept(
    stream: &mut TcpStream,
    peer: SocketAddr,
    trusted: &TrustedProxies,
    timeout: Duration,
) -> Result<SocketAddr, Refused> {
    let read = async {
        if trusted.contains(peer.ip()) { read_header(stream, peer).await } else { refuse_header(stream, peer).await }
    };
    tokio::time::timeout(timeout, read).await.unwrap_or(Err(Refused::Missing))
}

/// From a trusted proxy: the header is required. What is peeked and still incomplete
/// is all header, so it is consumed before looking again (a second peek would return
/// the same bytes at once); the last part is consumed up to the header's end exactly.
async fn read_header(stream: &mut TcpStream, peer: SocketAddr) -> Result<SocketAddr, Refused> {
    let mut header = Vec::new();
    let mut window = [0u8; MAX_HEADER];
    loop {
        let room = MAX_HEADER - header.len();
        let n = stream.peek(&mut window[..room]).await.map_err(|_| Refused::Missing)?;
        if n == 0 {
            return Err(Refused::Missing);
        }
        header.extend_from_slice(&window[..n]);
        match parse(&header)? {
            Some(parsed) => {
                let rest = parsed.len - (header.len() - n);
                stream.read_exact(&mut window[..rest]).await.map_err(|_| Refused::Missing)?;
                return Ok(parsed.client.unwrap_or(peer));
            }
            None if header.len() >= MAX_HEADER => return Err(Refused::Malformed),
            None => {
                stream.read_exact(&mut window[..n]).await.map_err(|_| Refused::Missing)?;
            }
        }
    }
}

/// From any other peer: served as it is, unless it opens with a header.
async fn refuse_header(stream: &mut TcpStream, peer: SocketAddr) -> Result<SocketAddr, Refused> {
    let mut window = [0u8; V2_SIGNATURE.len()];
    loop {
        let n = stream.peek(&mut window).await.map_err(|_| Refused::Missing)?;
        if n == 0 {
            return Err(Refused::Missing);
        }
        match looks_like_header(&window[..n]) {
            Some(true) => return Err(Refused::Untrusted),
            Some(false) => return Ok(peer),
            None => tokio::time::sleep(PREFIX_POLL).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(command: u8, family: u8, payload: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.push(0x20 | command);
        h.push(family);
        h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        h.extend_from_slice(payload);
        h
    }

    fn client(buf: &[u8]) -> Result<Option<(usize, Option<String>)>, Refused> {
        parse(buf).map(|h| h.map(|h| (h.len, h.client.map(|c| c.to_string()))))
    }

    #[test]
    fn version_1_samples() {
        let ok = [
            (&b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET"[..], Some("192.0.2.1:56324")),
            (b"PROXY TCP6 2001:db8::1 2001:db8::2 4711 80\r\n", Some("[2001:db8::1]:4711")),
            (b"PROXY UNKNOWN\r\n", None),
            (b"PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n", None),
        ];
        for (bytes, want) in ok {
            // The header ends at its `\r\n`, whatever follows.
            let len = bytes.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
            assert_eq!(client(bytes), Ok(Some((len, want.map(str::to_owned)))), "{:?}", String::from_utf8_lossy(bytes));
        }
        for incomplete in
            [&b"P"[..], b"PROXY", b"PROXY TCP4 192.0.2.1 198.51.100.2 5", b"PROXY TCP4 1.1.1.1 2.2.2.2 1 2\r"]
        {
            assert_eq!(client(incomplete), Ok(None), "{:?}", String::from_utf8_lossy(incomplete));
        }
        let too_long = format!("PROXY UNKNOWN {}\r\n", "x".repeat(100));
        let malformed = [
            &b"PROXY TCP4 192.0.2.1 198.51.100.2 56324\r\n"[..],
            b"PROXY TCP4 2001:db8::1 198.51.100.2 1 2\r\n",
            b"PROXY TCP6 192.0.2.1 198.51.100.2 1 2\r\n",
            b"PROXY TCP4 192.0.2.1 198.51.100.2 65536 443\r\n",
            b"PROXY TCP4 192.0.2.1 198.51.100.2 +1 443\r\n",
            b"PROXY TCP4  192.0.2.1 198.51.100.2 1 443\r\n",
            b"PROXY UDP4 192.0.2.1 198.51.100.2 1 443\r\n",
            b"PROXY \xff\r\n",
            too_long.as_bytes(),
            b"GET / HTTP/1.1\r\n",
        ];
        for bad in malformed {
            assert_eq!(client(bad), Err(Refused::Malformed), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn version_2_samples() {
        let tcp4 = [192, 0, 2, 1, 198, 51, 100, 2, 0xdc, 0x04, 0x01, 0xbb];
        let mut tcp6 = vec![0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        tcp6.extend_from_slice(&[0; 16]);
        tcp6.extend_from_slice(&[0x12, 0x67, 0, 80]);
        let mut with_tlv = tcp4.to_vec();
        with_tlv.extend_from_slice(&[0x05, 0x00, 0x02, b'i', b'd']);
        let ok = [
            (v2(1, 0x11, &tcp4), Some("192.0.2.1:56324")),
            (v2(1, 0x21, &tcp6), Some("[2001:db8::1]:4711")),
            (v2(1, 0x11, &with_tlv), Some("192.0.2.1:56324")),
            (v2(0, 0x11, &tcp4), None),
            (v2(0, 0x00, &[]), None),
            (v2(1, 0x00, &[]), None),
            (v2(1, 0x12, &tcp4), None),
        ];
        for (bytes, want) in ok {
            assert_eq!(client(&bytes), Ok(Some((bytes.len(), want.map(str::to_owned)))), "{bytes:?}");
            for cut in 0..bytes.len() {
                assert_eq!(client(&bytes[..cut]), Ok(None), "{bytes:?} cut at {cut}");
            }
        }
        let mut bad_version = v2(1, 0x11, &tcp4);
        bad_version[12] = 0x11;
        let mut too_long = v2(1, 0x11, &tcp4);
        too_long[14..16].copy_from_slice(&((MAX_V2_PAYLOAD + 1) as u16).to_be_bytes());
        let malformed = [
            bad_version,
            v2(2, 0x11, &tcp4),
            v2(1, 0x41, &tcp4),
            v2(1, 0x11, &tcp4[..11]),
            v2(1, 0x21, &tcp4),
            too_long,
            b"\r\n\r\n\0\r\nQUIX\n\x21\x11\x00\x0c".to_vec(),
        ];
        for bad in malformed {
            assert_eq!(client(&bad), Err(Refused::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn only_a_signature_looks_like_a_header() {
        let cases: [(&[u8], Option<bool>); 9] = [
            (b"GET / HTTP/1.1\r\n", Some(false)),
            (b"PROPFIND / HTTP/1.1\r\n", Some(false)),
            (b"\r\nGET / HTTP/1.1\r\n", Some(false)),
            (b"PROXY TCP4", Some(true)),
            (b"PROXY ", Some(true)),
            (b"\r\n\r\n\0\r\nQUIT\n", Some(true)),
            (b"PRO", None),
            (b"\r\n\r\n", None),
            (b"P", None),
        ];
        for (bytes, want) in cases {
            assert_eq!(looks_like_header(bytes), want, "{:?}", String::from_utf8_lossy(bytes));
        }
    }
}
