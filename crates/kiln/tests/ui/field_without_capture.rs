use kiln::Route;

#[derive(Route)]
#[route("/writings")]
struct Writing {
    page: u32,
}

fn main() {}
