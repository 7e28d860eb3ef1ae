//! Absolute links from the configured public URL, never from the request's `Host`.

use kiln::test::TestClient;
use kiln::{App, BuildError, PublicUrl, Route};

#[derive(Route)]
#[route("/pages/{slug}")]
struct Page {
    slug: String,
}

#[derive(Route)]
#[route("/feed.rss")]
struct Feed;

async fn feed(_: Feed, url: PublicUrl) -> String {
    format!("{} {}", url, url.link(&Page { slug: "a b".into() }))
}

#[test]
fn links_are_made_absolute_from_the_public_url() {
    let table = [
        ("https://example.org", "https://example.org https://example.org/pages/a%20b"),
        ("https://example.org/", "https://example.org https://example.org/pages/a%20b"),
        ("http://127.0.0.1:8080/wiki", "http://127.0.0.1:8080/wiki http://127.0.0.1:8080/wiki/pages/a%20b"),
    ];
    for (base, expected) in table {
        let mut client = TestClient::new(App::new(|_| ()).public_url(base).route(feed));
        let res = client.request("GET", &Feed).header("Host", "evil.example").send();
        assert_eq!(res.text(), expected, "{base}");
    }
}

#[test]
fn a_bad_public_url_fails_the_build() {
    let err = App::new(|_| ()).public_url("example.org").route(feed).build().unwrap_err();
    assert!(matches!(err, BuildError::Setting { setting: "public_url", .. }), "{err:?}");
    assert_eq!(err.to_string(), "App::public_url: `example.org` does not start with `https://` or `http://`");
}

#[test]
fn without_a_public_url_the_handler_is_wired_wrongly() {
    let mut client = TestClient::new(App::new(|_| ()).route(feed));
    let res = client.get(&Feed);
    assert_eq!(res.status(), 500);
    assert!(res.text().contains("App::public_url"));
}
