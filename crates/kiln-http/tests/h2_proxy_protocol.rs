//! The PROXY protocol in front of h2c: the header is read exactly, then the HTTP/2
//! preface that follows it, and the streams see the client the header names.

mod h2_support;
mod support;

use kiln_http::{Limits, Server};
use support::TestServer;
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn h2c_behind_a_trusted_proxy_sees_the_client_it_names() {
    let server = TestServer::start_with(
        Server::new()
            .workers(1)
            .limits(Limits::default())
            .proxy_protocol(true)
            .trusted_proxies("127.0.0.1/32".parse().unwrap()),
    );
    let mut tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    tcp.write_all(b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n").await.unwrap();
    let client = h2_support::client(tcp).await;
    let answer = h2_support::get(&client, "/peer").await;
    assert_eq!((answer.status, answer.body_str()), (200, "192.0.2.1:56324"));
}
