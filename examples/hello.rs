//! The smallest kiln app: `cargo run --example hello`, then
//! `curl http://127.0.0.1:3000/hello/kiln`.

use kiln::{App, Route};

#[derive(Route)]
#[route("/hello/{name}")]
struct Hello {
    name: String,
}

async fn hello(route: Hello) -> String {
    format!("Hello, {}!", route.name)
}

/// The app: one route.
pub(crate) fn app() -> App<()> {
    App::new(|_worker| ()).route(hello)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(), server)?.run_until_signal()?;
    Ok(())
}
