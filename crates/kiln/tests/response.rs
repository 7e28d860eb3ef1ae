//! Responses: every `IntoResponse` type, parts (status, headers, cookies), HTML and
//! redirects to typed routes.

use kiln::maud::{Markup, Render, html};
use kiln::test::TestClient;
use kiln::{App, Bytes, Header, Html, Json, Redirect, Rendered, Route, SetCookie, StatusCode};

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
