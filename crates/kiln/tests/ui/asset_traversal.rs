fn main() {
    let _ = kiln::asset!("../Cargo.toml");
}
