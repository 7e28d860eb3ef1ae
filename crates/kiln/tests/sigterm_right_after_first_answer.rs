//! Regression: the server's SIGTERM listener used to be made only when
//! `run_until_signal` started, which may come after the server first answers; a SIGTERM
//! in between took the default action and ended the process without the drain. Now the
//! listeners exist from `serve` on, and a SIGTERM sent as soon as the server answers,
//! even before `run_until_signal` is called, drains.
//! Alone in its test binary: it sends SIGTERM to its own process, and no handler of the
//! test's own may hide the bug (with the old code this process dies of the signal).

mod healthz_support;

use std::net::TcpStream;
use std::time::Duration;

use healthz_support::{poll, status};
use kiln::App;
use kiln::http::Server;

#[test]
fn sigterm_right_after_first_answer_drains() {
    let server = Server::new().listen("127.0.0.1:0").workers(1).drain_delay(Duration::from_secs(1));
    let app = App::new(|_| ()).mount(kiln::healthz(server.readiness()));
    let serving = kiln::serve(app, server).unwrap();
    let addr = serving.local_addr();
    poll("/healthz to answer 200", || status(addr) == Some(200));

    // The first answer came; SIGTERM now, before `run_until_signal` is even called (the
    // widest form of the old window, so the old code fails every time, not by luck).
    signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
    let run = std::thread::spawn(move || serving.run_until_signal());

    // The graceful drain: still answering, saying it is draining, then stopping, and
    // `run_until_signal` ends without an error.
    poll("/healthz to answer 503 (draining)", || status(addr) == Some(503));
    poll("the server to stop accepting", || TcpStream::connect(addr).is_err());
    run.join().unwrap().unwrap();
}
