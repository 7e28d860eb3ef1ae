//! The site in-process, through kiln's `TestClient`: the same app `main` builds, on a
//! fresh SQLite file, with no socket. The black-box tests over a socket are in
//! `app/tests/site_http.rs`.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use kiln::App;
use kiln::db::{Database, Options};
use kiln::test::{TestClient, TestResponse};
use kiln_test_support::TempDir;

use super::settings::SiteArgs;
use crate::database::Databases;
use crate::state::Worker;

#[derive(Parser)]
struct Flags {
    #[command(flatten)]
    site: SiteArgs,
}

/// The editor's password, whose Argon2id hash (small costs, for a debug build) the test
/// app is given.
pub(super) const EDITOR_PASSWORD: &str = "correct horse battery staple";

/// The Argon2id hash of [`EDITOR_PASSWORD`], with small costs so that a debug build
/// checks it quickly (the server takes the costs from the hash).
fn editor_password_hash() -> String {
    use argon2::password_hash::{PasswordHasher, SaltString};
    use argon2::{Algorithm, Argon2, Params, Version};
    let params = Params::new(256, 1, 1, None).expect("argon2 params");
    let salt = SaltString::encode_b64(b"kiln site tests").expect("salt");
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    argon2.hash_password(EDITOR_PASSWORD.as_bytes(), &salt).expect("hash").to_string()
}

/// The site's app on a fresh, seeded database (kept alive by the returned folder).
pub(super) fn client(name: &str) -> (TestClient<kiln::AppService<Worker>>, TempDir) {
    let (app, dir) = app(name);
    (TestClient::new(app), dir)
}

/// The site's app as `main` builds it, on a fresh, seeded SQLite file in the returned
/// folder.
pub(super) fn app(name: &str) -> (App<Worker>, TempDir) {
    let dir = TempDir::new(&format!("site-unit-{name}"));
    let options = Options::default().migrations(kiln::db::migrations!("migrations/sqlite"));
    let main = Database::open(&dir.sqlite_url(), options).expect("open the database");
    super::seed::seed_if_empty(&main).expect("seed");
    let databases = Databases {
        main,
        long: None,
        long_query: Duration::from_millis(5),
        query_timeout: Duration::from_secs(5),
        bus: kiln::realtime::Bus::new(),
    };
    let flags = Flags::parse_from([
        "test",
        "--public-url",
        "https://wiki.example.org",
        "--editor-password-hash",
        &editor_password_hash(),
    ]);
    let settings = Arc::new(flags.site.settings("127.0.0.1:8080".parse().expect("address"), false).expect("settings"));
    let app = App::new({
        let settings = Arc::clone(&settings);
        move |_| Worker::new(&databases, &settings)
    })
    .mount(super::mount)
    .mount(|app| settings.apply(app));
    (app, dir)
}

fn is_site_page(res: &TestResponse) -> bool {
    res.header("content-type") == Some("text/html; charset=utf-8")
        && res.text().starts_with("<!DOCTYPE html>")
        && res.text().contains("<a class=\"brand\" href=\"/\">kiln wiki</a>")
}

#[test]
fn the_home_page_links_every_seeded_page() {
    let (mut c, _dir) = client("home");
    let res = c.get(super::routes::Home { page: None });
    assert_eq!(res.status(), 200);
    assert!(is_site_page(&res));
    for slug in ["welcome", "tour", "markdown", "comments", "editing"] {
        let link = super::routes::ShowPage { slug: slug.into() }.to_string();
        assert!(res.text().contains(&format!("<a href=\"{link}\">")), "{slug}");
    }
}

#[test]
fn a_comment_goes_from_the_form_to_the_page() {
    let (mut c, _dir) = client("comment");
    let page = c.get("/pages/tour");
    assert_eq!(page.status(), 200);
    let cookie = page.header("set-cookie").expect("a CSRF cookie").split(';').next().expect("pair").to_owned();
    let text = page.text();
    let token = text.split("name=\"csrf_token\" value=\"").nth(1).and_then(|t| t.split('"').next()).expect("token");
    let res = c
        .request("POST", "/pages/tour/comments")
        .header("Cookie", &cookie)
        .form(&[("csrf_token", token), ("author", "Tess"), ("body", "In-process <b>hi</b>")])
        .send();
    assert_eq!(res.status(), 303, "{}", res.text());
    let page = c.request("GET", "/pages/tour").header("Cookie", &cookie).send();
    assert!(page.text().contains("<h2>Comments (21)</h2>"));
    assert!(page.text().contains("In-process &lt;b&gt;hi&lt;/b&gt;"));
    assert!(page.header("set-cookie").is_none(), "a visitor with a token keeps it");
    let forged = c.request("POST", "/pages/tour/comments").form(&[("author", "x"), ("body", "y")]).send();
    assert_eq!(forged.status(), 403);
    assert!(is_site_page(&forged));
}

#[test]
fn refusals_are_pages_of_the_site() {
    let (mut c, _dir) = client("errors");
    for (method, target, status) in
        [("GET", "/pages/nope", 404), ("GET", "/nothing/here", 404), ("PUT", "/", 405), ("GET", "/?page=zero", 400)]
    {
        let res = c.request(method, target).send();
        assert_eq!(res.status(), status, "{method} {target}");
        assert!(is_site_page(&res), "{method} {target}: {}", res.text());
    }
}

#[test]
fn the_feed_has_one_content_type_and_absolute_links() {
    let (mut c, _dir) = client("feed");
    let res = c.get(super::routes::Feed);
    assert_eq!(res.header_all("content-type").collect::<Vec<_>>(), ["application/rss+xml; charset=utf-8"]);
    assert!(res.text().contains("<link>https://wiki.example.org/pages/tour</link>"));
}
