use kiln::{App, Query};

async fn search(_: Query<Vec<(String, String)>>) -> &'static str {
    "found"
}

fn main() {
    let _ = App::new(|_| ()).route(search);
}
