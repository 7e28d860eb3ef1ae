//! Responses: every `IntoResponse` type, parts (status, headers, cookies), HTML and
//! redirects to typed routes.

use kiln::test::TestClient;
use kiln::{App, Bytes, Header, Html, Json, Redirect, Rendered, Route, SetCookie, StatusCode};
use maud::{Markup, Render, html};

#[derive(Route)]
#[route("/r/{case}")]
struct Case {
    case: String,
}

#[derive(Route)]
#[route("/writings/{page}")]
struct Writing {
    page: u32,
}

struct Cells(u32);

impl Render for Cells {
    fn render_to(&self, buf: &mut String) {
        for i in 1..=self.0 {
            html! { td { (i) } }.render_to(buf);
        }
    }
}

async fn respond(c: Case) -> kiln::Response {
    use kiln::IntoResponse;
    let mut res = kiln::Response::new();
    match c.case.as_str() {
        "static" => "static text".into_response(&mut res),
        "string" => String::from("owned text").into_response(&mut res),
        "vec" => vec![1u8, 2, 3].into_response(&mut res),
        "bytes" => Bytes::from_static(b"shared").into_response(&mut res),
        "status" => (StatusCode::ACCEPTED, "later").into_response(&mut res),
        "headers" => (StatusCode::CREATED, [("X-One", "1"), ("X-Two", "2")], "made").into_response(&mut res),
        "cookie" => {
            (SetCookie::new("sid", "abc").path("/").http_only(), Header("X-Three", "3"), "ok").into_response(&mut res)
        }
        "bad-cookie" => (SetCookie::new("sid", "a b;c"), "ok").into_response(&mut res),
        "html" => Html("<p>hi</p>").into_response(&mut res),
        "markup" => html! { p { "a < b" } }.into_response(&mut res),
        "rendered" => Rendered(Cells(3)).into_response(&mut res),
        "json" => Json(serde_json::json!({"a": [1, 2]})).into_response(&mut res),
        "redirect" => Redirect::to(&Writing { page: 2 }).into_response(&mut res),
        "permanent" => Redirect::permanent("/elsewhere").into_response(&mut res),
        "ok" => Ok::<_, (StatusCode, &str)>("fine").into_response(&mut res),
        _ => Err::<&str, _>((StatusCode::IM_A_TEAPOT, "short and stout")).into_response(&mut res),
    }
    res
}

fn get(case: &str) -> kiln::test::TestResponse {
    TestClient::new(App::new(|_| ()).route(respond)).get(&Case { case: case.into() })
}

#[test]
fn bodies_get_their_content_types() {
    let table = [
        ("static", 200, "text/plain; charset=utf-8", "static text"),
        ("string", 200, "text/plain; charset=utf-8", "owned text"),
        ("vec", 200, "application/octet-stream", "\u{1}\u{2}\u{3}"),
        ("bytes", 200, "application/octet-stream", "shared"),
        ("status", 202, "text/plain; charset=utf-8", "later"),
        ("html", 200, "text/html; charset=utf-8", "<p>hi</p>"),
        ("markup", 200, "text/html; charset=utf-8", "<p>a &lt; b</p>"),
        ("rendered", 200, "text/html; charset=utf-8", "<td>1</td><td>2</td><td>3</td>"),
        ("json", 200, "application/json", r#"{"a":[1,2]}"#),
        ("ok", 200, "text/plain; charset=utf-8", "fine"),
        ("err", 418, "text/plain; charset=utf-8", "short and stout"),
    ];
    for (case, status, ctype, body) in table {
        let res = get(case);
        assert_eq!(res.status(), status, "{case}");
        assert_eq!(res.header("content-type"), Some(ctype), "{case}");
        assert_eq!(res.text(), body, "{case}");
    }
}

#[test]
fn headers_and_cookies_are_set() {
    let res = get("headers");
    assert_eq!(res.status(), 201);
    assert_eq!((res.header("x-one"), res.header("x-two")), (Some("1"), Some("2")));
    let res = get("cookie");
    assert_eq!(res.header("set-cookie"), Some("sid=abc; Path=/; HttpOnly"));
    assert_eq!(res.header("x-three"), Some("3"));
    assert_eq!(get("bad-cookie").header("set-cookie"), None, "an unsafe cookie is dropped");
}

#[test]
fn redirects_point_at_typed_links() {
    let res = get("redirect");
    assert_eq!(res.status(), 303);
    assert_eq!(res.header("location"), Some("/writings/2"));
    let res = get("permanent");
    assert_eq!(res.status(), 308);
    assert_eq!(res.header("location"), Some("/elsewhere"));
}

#[test]
fn markup_can_be_returned_directly() {
    async fn page(_: Writing) -> Markup {
        html! { h1 { "Page" } }
    }
    let mut client = TestClient::new(App::new(|_| ()).route(page));
    assert_eq!(client.get(&Writing { page: 1 }).text(), "<h1>Page</h1>");
}

/// Issue 11: `([("Content-Type", "application/rss+xml")], markup)` sent two
/// `Content-Type` headers, the part's and the body's.
#[test]
fn a_content_type_part_replaces_the_bodys() {
    async fn feed(_: Writing) -> ([(&'static str, &'static str); 1], Markup) {
        ([("Content-Type", "application/rss+xml")], html! { rss version="2.0" {} })
    }
    let mut client = TestClient::new(App::new(|_| ()).route(feed));
    let res = client.get(&Writing { page: 1 });
    assert_eq!(res.header_all("content-type").collect::<Vec<_>>(), ["application/rss+xml"]);
    assert_eq!(res.text(), r#"<rss version="2.0"></rss>"#);
    for case in ["static", "string", "json", "html", "vec"] {
        let res = get(case);
        assert_eq!(res.header_all("content-type").count(), 1, "{case}");
    }
}

#[test]
fn typed_bodies_carry_their_content_type() {
    use kiln::{Css, JavaScript, Rss, Typed, Xml};
    async fn typed(c: Case) -> kiln::Response {
        use kiln::IntoResponse;
        let mut res = kiln::Response::new();
        match c.case.as_str() {
            "xml" => Xml("<urlset/>").into_response(&mut res),
            "rss" => Rss(String::from("<rss/>")).into_response(&mut res),
            "css" => Css("p{}").into_response(&mut res),
            "js" => JavaScript("1").into_response(&mut res),
            "markup" => Typed("image/svg+xml", html! { svg {} }).into_response(&mut res),
            "bytes" => Typed("font/woff2", Bytes::from_static(b"wOF2")).into_response(&mut res),
            // A part still wins over a typed body.
            _ => ([("Content-Type", "text/xsl")], Xml("<x/>")).into_response(&mut res),
        }
        res
    }
    let mut client = TestClient::new(App::new(|_| ()).route(typed));
    let table = [
        ("xml", "application/xml; charset=utf-8", "<urlset/>"),
        ("rss", "application/rss+xml; charset=utf-8", "<rss/>"),
        ("css", "text/css; charset=utf-8", "p{}"),
        ("js", "text/javascript; charset=utf-8", "1"),
        ("markup", "image/svg+xml", "<svg></svg>"),
        ("bytes", "font/woff2", "wOF2"),
        ("part", "text/xsl", "<x/>"),
    ];
    for (case, ctype, body) in table {
        let res = client.get(&Case { case: case.into() });
        assert_eq!(res.header_all("content-type").collect::<Vec<_>>(), [ctype], "{case}");
        assert_eq!(res.text(), body, "{case}");
    }
}

#[test]
fn an_explicit_status_wins_over_the_bodys() {
    async fn gone(_: Writing) -> (StatusCode, Redirect) {
        (StatusCode::MOVED_PERMANENTLY, Redirect::to("/elsewhere"))
    }
    let mut client = TestClient::new(App::new(|_| ()).route(gone));
    let res = client.get(&Writing { page: 1 });
    assert_eq!(res.status(), 301);
    assert_eq!(res.header("location"), Some("/elsewhere"));
}

#[test]
fn an_optional_part_is_sent_only_when_present() {
    async fn maybe(c: Case) -> (Option<SetCookie>, &'static str) {
        ((c.case == "yes").then(|| SetCookie::new("a", "1")), "ok")
    }
    let mut client = TestClient::new(App::new(|_| ()).route(maybe));
    assert_eq!(client.get(&Case { case: "yes".into() }).header("set-cookie"), Some("a=1"));
    assert_eq!(client.get(&Case { case: "no".into() }).header("set-cookie"), None);
}
