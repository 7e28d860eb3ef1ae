//! Issue 25: kiln ships one HTML system (`kiln::html!`); an app that prefers maud
//! depends on maud itself, and kiln's `maud` feature makes `maud::Markup` a response.

use kiln::{App, Route};
use maud::{DOCTYPE, Markup, html};

#[derive(Route)]
#[route("/page")]
struct Page;

async fn page(_: Page) -> Markup {
    html! {
        (DOCTYPE)
        html {
            head { title { "a < b" } }
            body.wiki { h1 #top { "a < b" } }
        }
    }
}

fn main() {
    let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(page));
    let res = client.get(&Page);
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(
        res.text(),
        "<!DOCTYPE html><html><head><title>a &lt; b</title></head><body class=\"wiki\">\
         <h1 id=\"top\">a &lt; b</h1></body></html>"
    );
}
