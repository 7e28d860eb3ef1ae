//! Restart without dropping, over HTTP/2: h2c clients (`h2`'s own, prior knowledge)
//! keep several streams in flight on each connection while the server hands its
//! listeners over on SIGUSR2, twice. The old process says GOAWAY and finishes the
//! streams it took; a stream it did not take (refused, or above GOAWAY's last stream
//! id) was not processed and is sent again on a new connection, as RFC 9113 §8.7
//! allows; every request is answered 200, by three processes in turn.
//!
//! The server under test is this test binary itself (see `handover_support`).

mod handover_support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2::Reason;
use h2::client::SendRequest;
use handover_support::{Group, LIMIT, hand_over_twice, serve_if_asked, signal};
use nix::sys::signal::Signal;

/// Client connections, and streams in flight on each.
const CONNECTIONS: usize = 10;
const STREAMS: usize = 5;

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    /// Requests the server did not process (refused, or cut by its GOAWAY), sent again.
    retried: AtomicU64,
    pids: Mutex<std::collections::BTreeSet<String>>,
    errors: Mutex<Vec<String>>,
}

enum Outcome {
    Answered(u16, String),
    /// Not processed by the server: safe to send again (RFC 9113 §8.7).
    Unprocessed,
    Failed(String),
}

/// Whether an error says the server did not process the stream: REFUSED_STREAM, or
/// the stream was above the last stream id of the server's GOAWAY.
fn unprocessed(e: &h2::Error) -> bool {
    e.reason() == Some(Reason::REFUSED_STREAM) || (e.is_go_away() && e.is_remote())
}

async fn one_request(client: SendRequest<Bytes>) -> Outcome {
    let mut client = match client.ready().await {
        Ok(client) => client,
        Err(e) if unprocessed(&e) || e.is_go_away() => return Outcome::Unprocessed,
        Err(e) => return Outcome::Failed(format!("ready: {e}")),
    };
    let req = http::Request::get("http://localhost/").body(()).unwrap();
    let answer = match client.send_request(req, true) {
        Ok((answer, _)) => answer,
        // Nothing was sent: the connection is going away.
        Err(_) => return Outcome::Unprocessed,
    };
    let answer = match tokio::time::timeout(Duration::from_secs(10), answer).await {
        Err(_) => return Outcome::Failed("no answer in 10 s".into()),
        Ok(Err(e)) if unprocessed(&e) => return Outcome::Unprocessed,
        Ok(Err(e)) => return Outcome::Failed(format!("answer: {e:?}")),
        Ok(Ok(answer)) => answer,
    };
    let status = answer.status().as_u16();
    let mut body = answer.into_body();
    let mut pid = Vec::new();
    while let Some(piece) = body.data().await {
        match piece {
            Ok(piece) => {
                let _ = body.flow_control().release_capacity(piece.len());
                pid.extend_from_slice(&piece);
            }
            Err(e) => return Outcome::Failed(format!("body: {e:?}")),
        }
    }
    Outcome::Answered(status, String::from_utf8_lossy(&pid).into_owned())
}

/// One client: a connection with `STREAMS` requests in flight at a time, renewed when
/// the server goes away.
async fn client(addr: SocketAddr, stop: Arc<AtomicBool>, tally: Arc<Tally>) {
    let deadline = Instant::now() + LIMIT;
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        let tcp = match tokio::net::TcpStream::connect(addr).await {
            Ok(tcp) => tcp,
            Err(e) => return tally.errors.lock().unwrap().push(format!("connect: {e}")),
        };
        let (send, connection) = match h2::client::handshake(tcp).await {
            Ok(pair) => pair,
            Err(e) => return tally.errors.lock().unwrap().push(format!("handshake: {e}")),
        };
        tokio::spawn(connection);
        let mut going_away = false;
        while !going_away && !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            let batch: Vec<_> = (0..STREAMS).map(|_| tokio::spawn(one_request(send.clone()))).collect();
            for request in batch {
                match request.await.unwrap() {
                    Outcome::Answered(200, pid) => {
                        tally.ok.fetch_add(1, Ordering::Relaxed);
                        tally.pids.lock().unwrap().insert(pid);
                    }
                    Outcome::Answered(status, _) => tally.errors.lock().unwrap().push(format!("status {status}")),
                    Outcome::Unprocessed => {
                        tally.retried.fetch_add(1, Ordering::Relaxed);
                        going_away = true;
                    }
                    Outcome::Failed(why) => tally.errors.lock().unwrap().push(why),
                }
            }
        }
    }
}

#[test]
fn handover_on_sigusr2_twice_under_h2_clients_loses_no_request() {
    if serve_if_asked() {
        return;
    }
    let group = Group::start("handover_on_sigusr2_twice_under_h2_clients_loses_no_request", None);
    let addr = group.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let clients: Vec<_> =
        (0..CONNECTIONS).map(|_| runtime.spawn(client(addr, Arc::clone(&stop), Arc::clone(&tally)))).collect();
    let pid = hand_over_twice(&group, &tally.ok);
    stop.store(true, Ordering::Relaxed);
    runtime.block_on(async {
        for c in clients {
            c.await.unwrap();
        }
    });
    signal(Signal::SIGTERM, pid);

    let errors = tally.errors.lock().unwrap();
    let pids = tally.pids.lock().unwrap();
    eprintln!(
        "h2 hand-over under load: {} answered, {} failed, {} unprocessed requests sent again, served by pids {pids:?}",
        tally.ok.load(Ordering::Relaxed),
        errors.len(),
        tally.retried.load(Ordering::Relaxed),
    );
    assert!(errors.is_empty(), "failed requests: {:?}", &errors[..errors.len().min(10)]);
    assert_eq!(pids.len(), 3, "three processes served in turn: {pids:?}");
}
