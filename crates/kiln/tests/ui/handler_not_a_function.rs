use kiln::App;

fn main() {
    let _ = App::new(|_| ()).fallback(42);
}
