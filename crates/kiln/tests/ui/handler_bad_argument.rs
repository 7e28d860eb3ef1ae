use kiln::{App, Route};

#[derive(Route)]
#[route("/pong")]
struct Pong;

struct NotAnExtractor;

async fn pong(_: Pong, _: NotAnExtractor) -> &'static str {
    "PONG"
}

fn main() {
    let _ = App::new(|_| ()).route(pong);
}
