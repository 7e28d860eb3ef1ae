use kiln::{App, Route};

#[derive(Route)]
#[route("/pong")]
struct Pong;

struct Page;

async fn pong(_: Pong) -> Page {
    Page
}

fn main() {
    let _ = App::new(|_| ()).route(pong);
}
