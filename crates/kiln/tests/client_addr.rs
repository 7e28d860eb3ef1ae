//! The client's address over real sockets, in the handler (`ClientAddr`) and in the
//! access log: the PROXY protocol's client from a trusted proxy, `X-Forwarded-For`
//! believed from a trusted proxy and ignored from anyone else.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use kiln::access_log::{AccessLog, LogFormat, LogTarget};
use kiln::http::{Server, TrustedProxies};
use kiln::{App, ClientAddr, Route};

#[derive(Route)]
#[route(GET, "/ip")]
struct Ip;

async fn ip(_: Ip, ClientAddr(client): ClientAddr) -> String {
    client.to_string()
}

/// Serves `/ip` behind `trusted`, sends each raw request on its own connection, and
/// returns the bodies and the access log's lines.
fn run(trusted: &str, proxy_protocol: bool, requests: &[&[u8]]) -> (Vec<String>, Vec<String>) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kiln-client-addr-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("access.log");
    let trusted: TrustedProxies = trusted.parse().unwrap();
    let log = AccessLog::open(LogTarget::File(path.clone()), LogFormat::Combined);
    let app = App::new(|_| ()).trusted_proxies(trusted.clone()).access_log(log).route(ip);
    let server = Server::new()
        .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
        .workers(1)
        .proxy_protocol(proxy_protocol)
        .trusted_proxies(trusted);
    let serving = kiln::serve(app, server).unwrap();
    let bodies = requests
        .iter()
        .map(|raw| {
            let mut s = TcpStream::connect(serving.local_addr()).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            s.write_all(raw).unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default()
        })
        .collect();
    serving.shutdown();
    serving.wait().unwrap();
    let lines = std::fs::read_to_string(&path).unwrap().lines().map(str::to_owned).collect();
    let _ = std::fs::remove_dir_all(&dir);
    (bodies, lines)
}

const FORWARDED: &[u8] = b"GET /ip HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 6.6.6.6\r\nConnection: close\r\n\r\n";

#[test]
fn x_forwarded_for_from_an_untrusted_client_is_ignored() {
    let (bodies, lines) = run("10.0.0.0/8", false, &[FORWARDED]);
    assert_eq!(bodies, ["127.0.0.1"]);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("127.0.0.1 "), "{}", lines[0]);
}

#[test]
fn x_forwarded_for_from_a_trusted_proxy_names_the_client_in_the_handler_and_the_log() {
    let (bodies, lines) = run("127.0.0.1", false, &[FORWARDED]);
    assert_eq!(bodies, ["6.6.6.6"]);
    assert!(lines[0].starts_with("6.6.6.6 "), "{}", lines[0]);
}

#[test]
fn the_proxy_protocol_client_reaches_the_handler_and_the_log() {
    let header =
        b"PROXY TCP4 192.0.2.9 198.51.100.2 56324 443\r\nGET /ip HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    let (bodies, lines) = run("127.0.0.1", true, &[header]);
    assert_eq!(bodies, ["192.0.2.9"]);
    assert!(lines[0].starts_with("192.0.2.9 "), "{}", lines[0]);
}
