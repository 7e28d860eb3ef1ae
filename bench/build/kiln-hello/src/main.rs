//! The README's example, as a first app writes it.

use kiln::{App, Route};

#[derive(Route)]
#[route("/hello/{name}")]
struct Hello {
    name: String,
}

async fn hello(route: Hello) -> String {
    format!("Hello, {}!", route.name)
}

fn main() {
    let app = App::new(|_worker| ()).route(hello);
    kiln::serve(app, kiln::http::Server::new()).unwrap().run_until_signal().unwrap();
}
