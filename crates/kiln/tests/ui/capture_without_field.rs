use kiln::Route;

#[derive(Route)]
#[route("/writings/{page}/{slug}")]
struct Writing {
    page: u32,
}

fn main() {}
