use kiln::Route;

#[derive(Route)]
#[route("/writings/{page}")]
struct Writing {
    page: u32,
}

fn main() {
    let _link = Writing { page: "three" }.to_string();
}
