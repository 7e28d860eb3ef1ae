//! `GET /healthz` for a load balancer's health checks: `200` while the server takes
//! requests, `503` from the moment it drains (SIGTERM's drain delay, a shutdown, or a
//! hand-over to a new process), so that the balancer stops sending before the
//! listeners close. It reads the engine's [`Readiness`]; it touches no database, so a
//! slow database does not take every server out of the pool at once.

use kiln_http::{Readiness, StatusCode};

use crate::App;

/// The health check's route: `GET /healthz` (and `HEAD`).
#[derive(crate::Route, Debug, Clone, Copy)]
#[route(GET, "/healthz")]
pub struct Healthz;

/// Mounts [`Healthz`], answering from `readiness` — the one the server was built with:
///
/// ```
/// use kiln::{App, test::TestClient};
///
/// let server = kiln::http::Server::new();
/// let app = App::new(|_| ()).mount(kiln::healthz(server.readiness()));
/// let mut client = TestClient::new(app);
/// assert_eq!(client.get("/healthz").status(), 200);
/// ```
pub fn healthz<S: 'static>(readiness: Readiness) -> impl FnOnce(App<S>) -> App<S> {
    move |app| {
        app.route(move |_: Healthz| {
            let ready = readiness.is_ready();
            async move { if ready { Ok("ok\n") } else { Err(StatusCode::SERVICE_UNAVAILABLE) } }
        })
    }
}
