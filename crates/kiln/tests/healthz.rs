//! `/healthz` follows the engine: 200 while serving, 503 from SIGTERM on, through the
//! drain delay during which the server still answers, then the server stops.
//! Alone in its test binary: it sends SIGTERM to its own process.

mod healthz_support;

use std::net::TcpStream;
use std::time::Duration;

use healthz_support::{poll, status};
use kiln::App;
use kiln::http::Server;

#[test]
fn healthz_answers_503_once_sigterm_begins_the_drain_and_the_server_stops_after_it() {
    let server = Server::new().listen("127.0.0.1:0").workers(1).drain_delay(Duration::from_secs(2));
    let app = App::new(|_| ()).mount(kiln::healthz(server.readiness()));
    let serving = kiln::serve(app, server).unwrap();
    let addr = serving.local_addr();
    let run = std::thread::spawn(move || serving.run_until_signal());
    poll("/healthz to answer 200", || status(addr) == Some(200));

    // The server listens for SIGTERM from `serve` on, so one raised as soon as it
    // answers drains (`sigterm_right_after_first_answer.rs` is the regression test).
    signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
    // During the drain delay the server still answers, and says it is draining.
    poll("/healthz to answer 503", || status(addr) == Some(503));
    poll("the server to stop accepting", || TcpStream::connect(addr).is_err());
    run.join().unwrap().unwrap();
}
