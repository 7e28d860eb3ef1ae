//! A TCP relay between the browser and the server under test: the browser's origin
//! stays one address while the server behind it stops and another starts, and the
//! test decides when a reconnecting browser gets through. It also keeps what each
//! client sent, so that a test can read the requests (a `Last-Event-ID`, say).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a held connection waits for a server before the relay drops it.
const HOLD_LIMIT: Duration = Duration::from_secs(30);

#[derive(Default)]
struct State {
    /// Where connections go; `None` holds them until it is set.
    target: Option<SocketAddr>,
    /// What each connection's client sent, in the order they were accepted.
    sent: Vec<Arc<Mutex<Vec<u8>>>>,
    /// Connections accepted while holding, not yet forwarded.
    held: usize,
}

/// The relay; its threads end with the test binary (each one is bounded by its sockets).
pub struct Relay {
    /// Where the browser connects.
    pub addr: SocketAddr,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Relay {
    /// A relay on a free loopback port, forwarding to `target`.
    pub fn start(target: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let addr = listener.local_addr().expect("its address");
        let state = Arc::new((Mutex::new(State { target: Some(target), ..State::default() }), Condvar::new()));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || relay(client, &shared));
            }
        });
        Relay { addr, state }
    }

    /// New connections wait (accepted, not forwarded) until [`forward_to`](Self::forward_to).
    pub fn hold(&self) {
        self.state.0.lock().unwrap().target = None;
    }

    /// New and held connections go to `target`.
    pub fn forward_to(&self, target: SocketAddr) {
        self.state.0.lock().unwrap().target = Some(target);
        self.state.1.notify_all();
    }

    /// How many connections wait for a target.
    pub fn held(&self) -> usize {
        self.state.0.lock().unwrap().held
    }

    /// What each client sent so far, one string per connection.
    pub fn requests(&self) -> Vec<String> {
        let state = self.state.0.lock().unwrap();
        state.sent.iter().map(|s| String::from_utf8_lossy(&s.lock().unwrap()).into_owned()).collect()
    }
}

fn relay(client: TcpStream, shared: &(Mutex<State>, Condvar)) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let target = {
        let mut state = shared.0.lock().unwrap();
        state.sent.push(Arc::clone(&sent));
        state.held += 1;
        let (mut state, _) = shared.1.wait_timeout_while(state, HOLD_LIMIT, |s| s.target.is_none()).unwrap();
        state.held -= 1;
        state.target
    };
    let Some(server) = target.and_then(|t| TcpStream::connect(t).ok()) else { return };
    let (Ok(client_r), Ok(server_w)) = (client.try_clone(), server.try_clone()) else { return };
    let up = std::thread::spawn(move || pump(client_r, server_w, Some(&sent)));
    pump(server, client, None);
    let _ = up.join();
}

/// Copies `from` to `to` until `from` ends, keeping a copy in `log`; then passes the end on.
fn pump(mut from: TcpStream, mut to: TcpStream, log: Option<&Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 16384];
    while let Ok(n @ 1..) = from.read(&mut buf) {
        if let Some(log) = log {
            log.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
