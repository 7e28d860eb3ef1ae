//! Per-worker state: a factory that fails stops the server, naming the worker and
//! the error, instead of leaving it half started.

use std::net::SocketAddr;

use kiln::http::Server;
use kiln::{App, Route, ServeError, State};

#[derive(Route)]
#[route("/count")]
struct Count;

async fn count(_: Count, state: State<String>) -> String {
    state.0.to_string()
}

fn server(workers: usize) -> Server {
    Server::new().listen(SocketAddr::from(([127, 0, 0, 1], 0))).workers(workers)
}

#[test]
fn a_failing_state_factory_stops_start_up() {
    let app = App::try_new(|worker| match worker {
        0 => Ok(format!("worker {worker}")),
        _ => Err(format!("cannot open the database for worker {worker}")),
    })
    .route(count);
    let err = kiln::serve(app, server(3)).unwrap().run_until_signal().unwrap_err();
    let ServeError::State(state) = &err else { panic!("{err:?}") };
    assert!(state.worker() == 1 || state.worker() == 2, "{err}");
    assert_eq!(
        err.to_string(),
        format!("the state of worker {0} could not be built: cannot open the database for worker {0}", state.worker())
    );
}

#[test]
fn wait_returns_the_state_error_too() {
    let app = App::try_new(|_| Err::<(), _>(std::io::Error::other("no config file")));
    let err = kiln::serve(app, server(1)).unwrap().wait().unwrap_err();
    assert_eq!(err.to_string(), "the state of worker 0 could not be built: no config file");
}

#[test]
fn a_state_that_builds_serves() {
    let app = App::try_new(|worker| Ok::<_, std::io::Error>(format!("state of {worker}"))).route(count);
    let mut client = kiln::test::TestClient::new(app);
    assert_eq!(client.get(&Count).text(), "state of 0");
}

#[test]
#[should_panic(expected = "the state of worker 0 could not be built: nope")]
fn the_test_client_names_a_failing_state() {
    let _ = kiln::test::TestClient::new(App::try_new(|_| Err::<(), _>("nope")).route(count_unit));
}

async fn count_unit(_: Count) -> &'static str {
    "0"
}
