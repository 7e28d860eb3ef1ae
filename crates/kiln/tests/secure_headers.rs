//! `SecureHeaders`: pages no other site may frame, no response's type sniffed, the
//! app's own headers and excepted paths left alone.

use kiln::test::TestClient;
use kiln::{App, Route, SecureHeaders};

#[test]
fn secure_headers_keep_pages_out_of_other_sites_frames() {
    #[derive(Route)]
    #[route("/page")]
    struct Page;
    #[derive(Route)]
    #[route("/framable")]
    struct Framable;
    #[derive(Route)]
    #[route("/text")]
    struct Text;
    #[derive(Route)]
    #[route("/bench/pong")]
    struct Pong;

    async fn page(_: Page) -> kiln::markup::Fragment<kiln::markup::Flow> {
        kiln::html! { p { "hi" } }
    }
    async fn framable(_: Framable) -> ([(&'static str, &'static str); 1], kiln::markup::Fragment<kiln::markup::Flow>) {
        ([("Content-Security-Policy", "frame-ancestors https://partner.example")], kiln::html! { p { "hi" } })
    }
    async fn text(_: Text) -> &'static str {
        "plain"
    }
    async fn pong(_: Pong) -> &'static str {
        "PONG"
    }
    let headers = SecureHeaders::new().except(|path| path.starts_with("/bench/"));
    let app = App::new(|_| ()).route(page).route(framable).route(text).route(pong).secure_headers(headers);
    let mut c = TestClient::new(app);

    let res = c.get(&Page);
    assert_eq!(res.header("x-frame-options"), Some("DENY"));
    assert_eq!(res.header("content-security-policy"), Some("frame-ancestors 'none'"));
    assert_eq!(res.header("referrer-policy"), Some("strict-origin-when-cross-origin"));
    assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
    // The app's own policy stands, once.
    let res = c.get(&Framable);
    assert_eq!(
        res.header_all("content-security-policy").collect::<Vec<_>>(),
        ["frame-ancestors https://partner.example"]
    );
    // Not HTML: only nosniff. An excepted path: nothing.
    let res = c.get(&Text);
    assert_eq!((res.header("x-content-type-options"), res.header("x-frame-options")), (Some("nosniff"), None));
    let res = c.get(&Pong);
    assert_eq!((res.header("x-content-type-options"), res.text()), (None, "PONG".to_owned()));
    // Refusals are pages too: a 404 from routing, a 405.
    let res = c.get("/nowhere");
    assert_eq!((res.status().as_u16(), res.header("x-content-type-options")), (404, Some("nosniff")));
    assert_eq!(c.request("POST", &Page).send().header("x-content-type-options"), Some("nosniff"));
}
