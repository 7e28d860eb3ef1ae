use kiln::{App, Route, State};

#[derive(Route)]
#[route("/pong")]
struct Pong;

async fn pong(_: Pong, _: State<u32>) -> &'static str {
    "PONG"
}

fn main() {
    let _ = App::new(|_| String::new()).route(pong);
}
