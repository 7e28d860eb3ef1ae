//! Issue 25: a blocking call (argon2 in a login, say) made on the worker stalled every
//! connection on it. Through `kiln::blocking` it runs on the pool, and the worker
//! serves other requests meanwhile: here a second request is answered while the first
//! one's closure is still held, on a server with one worker.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use kiln::http::Server;
use kiln::{App, Rejection, Route, State};
use kiln_test_support::{Reply, get};

#[derive(Route)]
#[route("/slow")]
struct Slow;

#[derive(Route)]
#[route("/fast")]
struct Fast;

/// The test's hold on the slow closure: it says when it starts, then waits for the
/// release.
struct Gate {
    started: Mutex<Sender<()>>,
    release: Mutex<Receiver<()>>,
}

async fn slow(_: Slow, gate: State<Arc<Gate>>) -> Result<&'static str, Rejection> {
    let gate = Arc::clone(&gate);
    kiln::blocking(move || {
        gate.started.lock().unwrap().send(()).unwrap();
        gate.release.lock().unwrap().recv().unwrap();
    })
    .await?;
    Ok("slow done")
}

async fn fast(_: Fast) -> &'static str {
    "fast"
}

#[test]
fn a_blocking_call_does_not_stall_other_requests_on_the_worker() {
    let (started_tx, started) = channel();
    let (release, release_rx) = channel();
    let gate = Arc::new(Gate { started: Mutex::new(started_tx), release: Mutex::new(release_rx) });
    let app = App::new(move |_| Arc::clone(&gate)).route(slow).route(fast);
    let serving = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).unwrap();
    let addr = serving.local_addr();

    let (slow_done, slow_reply) = channel::<std::io::Result<Reply>>();
    let slow_client = std::thread::spawn(move || slow_done.send(get(addr, "/slow")).unwrap());
    started.recv().expect("the slow closure started");

    // The slow closure is held: the one worker still answers.
    let reply = get(addr, "/fast").expect("the worker answered while the blocking call was held");
    assert_eq!(reply.text(), "fast");
    assert!(slow_reply.try_recv().is_err(), "the slow request finished before its release");

    release.send(()).unwrap();
    let reply = slow_reply.recv().unwrap().expect("the slow request");
    assert_eq!((reply.status, reply.text()), (200, "slow done"));
    slow_client.join().unwrap();
    serving.shutdown();
    serving.wait().unwrap();
}
