fn main() {
    let _ = kiln::asset!("no-such-file.css");
}
