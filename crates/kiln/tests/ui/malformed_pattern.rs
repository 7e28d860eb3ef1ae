use kiln::Route;

#[derive(Route)]
#[route("/writings/{page")]
struct Writing {
    page: u32,
}

#[derive(Route)]
#[route("/files/{*rest}/edit")]
struct Edit {
    rest: String,
}

#[derive(Route)]
#[route(FETCH, "/fetch")]
struct Fetch;

fn main() {}
