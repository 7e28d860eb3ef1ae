//! Content-hashed assets: `asset!` links are served for ever cacheable, other files
//! as ordinary static files, and no path leaves the folder.

use kiln::test::TestClient;
use kiln::{App, AppService, IMMUTABLE, asset};

fn client() -> TestClient<AppService<()>> {
    TestClient::new(App::new(|_| ()).assets(concat!(env!("CARGO_MANIFEST_DIR"), "/public")))
}

#[test]
fn an_asset_link_names_its_content() {
    let link = asset!("hello.txt");
    let hash = link.strip_prefix("/static/hello.").unwrap().strip_suffix(".txt").unwrap();
    assert_eq!(hash.len(), 8);
    assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
}

#[test]
fn the_hashed_name_is_immutable() {
    let mut c = client();
    let res = c.get(asset!("hello.txt"));
    assert_eq!(res.status(), 200);
    assert_eq!(res.text(), "kiln asset test\n");
    assert_eq!(res.header("cache-control"), Some(IMMUTABLE));
    assert_eq!(res.header_all("cache-control").count(), 1);
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
}

#[test]
fn a_name_that_needs_escaping_makes_a_valid_link() {
    let link = asset!("fonts/my font.css");
    assert!(link.starts_with("/static/fonts/my%20font.") && link.ends_with(".css"), "{link}");
    let res = client().get(link);
    assert_eq!(res.status(), 200);
    assert_eq!(res.text(), "body{}\n");
    assert_eq!(res.header("cache-control"), Some(IMMUTABLE));
    assert_eq!(res.header("content-type"), Some("text/css; charset=utf-8"));
}

#[test]
fn the_plain_name_is_an_ordinary_static_file() {
    let res = client().get("/static/hello.txt");
    assert_eq!(res.status(), 200);
    assert_ne!(res.header("cache-control"), Some(IMMUTABLE));
}

#[test]
fn a_stale_hash_is_not_found() {
    let res = client().get("/static/hello.00000000.txt");
    assert_eq!(res.status(), 404);
}

#[test]
fn traversal_in_the_asset_path_is_refused() {
    let mut c = client();
    for target in [
        "/static/../Cargo.toml",
        "/static/..%2FCargo.toml",
        "/static/%2e%2e/Cargo.toml",
        "/static/..%2f..%2fCargo.toml",
        "/static//etc/passwd",
        "/static/%2Fetc%2Fpasswd",
    ] {
        let res = c.get(target);
        assert!(matches!(res.status().as_u16(), 400 | 404), "{target}: {}", res.status());
        assert!(!res.text().contains("[package]"), "{target}");
    }
}
