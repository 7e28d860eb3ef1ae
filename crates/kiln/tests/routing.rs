//! Routing: typed routes and their links, methods, 405 + Allow, HEAD, conflicts,
//! trailing slashes and the fallback.

use kiln::test::TestClient;
use kiln::{App, BuildError, Route, StatusCode, TrailingSlash};

#[derive(Route, Debug, PartialEq)]
#[route("/writings/{page}")]
struct Writing {
    page: u32,
    lang: Option<String>,
    #[query]
    sort: String,
}

#[derive(Route)]
#[route("/files/{*rest}")]
struct File {
    rest: String,
}

#[derive(Route)]
#[route("/items/{name}")]
struct Item {
    name: String,
}

#[derive(Route)]
#[route(POST, "/items/{name}")]
struct NewItem {
    name: String,
}

#[derive(Route)]
#[route("/items/{other}")]
struct OtherItem {
    other: String,
}

#[derive(Route)]
#[route("/about")]
struct About;

async fn writing(w: Writing) -> String {
    format!("page {} lang {:?} sort {}", w.page, w.lang, w.sort)
}

async fn file(f: File) -> String {
    f.rest
}

async fn item(i: Item) -> String {
    format!("item {}", i.name)
}

async fn new_item(i: NewItem) -> (StatusCode, String) {
    (StatusCode::CREATED, format!("made {}", i.name))
}

async fn other_item(_: OtherItem) -> &'static str {
    "other"
}

async fn about(_: About) -> &'static str {
    "about"
}

fn app() -> App<()> {
    App::new(|_| ()).route(writing).route(file).route(item).route(new_item).route(about)
}

#[test]
fn a_route_value_renders_its_percent_encoded_link() {
    let w = Writing { page: 3, lang: Some("fr ca&x".into()), sort: "a=b".into() };
    assert_eq!(w.to_string(), "/writings/3?lang=fr%20ca%26x&sort=a%3Db");
    let w = Writing { page: 3, lang: None, sort: "new".into() };
    assert_eq!(w.to_string(), "/writings/3?sort=new");
    assert_eq!(Item { name: "a/b c".into() }.to_string(), "/items/a%2Fb%20c");
    assert_eq!(File { rest: "css/site main.css".into() }.to_string(), "/files/css/site%20main.css");
    assert_eq!(About.to_string(), "/about");
}

#[test]
fn a_link_leads_back_to_the_same_value() {
    let mut client = TestClient::new(app());
    let w = Writing { page: 12, lang: Some("é & ü".into()), sort: "x y".into() };
    assert_eq!(client.get(&w).text(), r#"page 12 lang Some("é & ü") sort x y"#);
    assert_eq!(client.get(&Item { name: "a/b c".into() }).text(), "item a/b c");
    assert_eq!(client.get(&File { rest: "css/a b.css".into() }).text(), "css/a b.css");
}

#[test]
fn route_constants_name_pattern_and_method() {
    assert_eq!(Writing::PATTERN, "/writings/{page}");
    assert_eq!(Writing::METHOD, kiln::Method::GET);
    assert_eq!(NewItem::METHOD, kiln::Method::POST);
}

#[test]
fn an_unparsable_capture_is_404_and_a_bad_query_is_400() {
    let mut client = TestClient::new(app());
    let res = client.get("/writings/abc?sort=x");
    assert_eq!(res.status(), 404);
    assert_eq!(res.text(), "path parameter `page` is not a valid `u32`\n");
    let res = client.get("/writings/1");
    assert_eq!(res.status(), 400);
    assert_eq!(res.text(), "query parameter `sort` is required\n");
}

#[test]
fn a_query_parameter_given_twice_is_400_not_one_of_the_two() {
    // Bug: `?lang=en&lang=fr` silently took the last value.
    let mut client = TestClient::new(app());
    for query in ["sort=a&lang=en&lang=fr", "sort=a&sort=b", "lang=en&sort=a&lang=en"] {
        let res = client.get(format!("/writings/1?{query}"));
        assert_eq!(res.status(), 400, "{query}");
        let name = if query.contains("sort=b") { "sort" } else { "lang" };
        assert_eq!(res.text(), format!("query parameter `{name}` is given more than once\n"), "{query}");
    }
    // Parameters the route does not name may repeat: they are not read.
    assert_eq!(client.get("/writings/1?sort=a&x=1&x=2").text(), "page 1 lang None sort a");
}

#[test]
fn methods_share_a_pattern() {
    let mut client = TestClient::new(app());
    assert_eq!(client.get("/items/x").text(), "item x");
    let res = client.request("POST", "/items/x").send();
    assert_eq!(res.status(), 201);
    assert_eq!(res.text(), "made x");
}

#[test]
fn a_wrong_method_is_405_with_allow() {
    let mut client = TestClient::new(app());
    let res = client.request("DELETE", "/items/x").send();
    assert_eq!(res.status(), 405);
    assert_eq!(res.header("allow"), Some("GET, POST, HEAD"));
    let res = client.request("POST", "/about").send();
    assert_eq!(res.status(), 405);
    assert_eq!(res.header("allow"), Some("GET, HEAD"));
}

#[test]
fn head_is_answered_from_get_without_a_body() {
    let mut client = TestClient::new(app());
    let res = client.request("HEAD", "/about").send();
    assert_eq!(res.status(), 200);
    assert_eq!(res.header("content-length"), Some("5"));
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
    assert!(res.bytes().is_empty());
}

#[test]
fn conflicting_routes_are_reported_naming_both() {
    let err = App::new(|_| ()).route(item).route(other_item).build().unwrap_err();
    let BuildError::Conflict { first, second } = &err else { panic!("{err}") };
    assert!(first.contains("Item") && first.contains("/items/{name}"), "{first}");
    assert!(second.contains("OtherItem") && second.contains("/items/{other}"), "{second}");
    assert!(err.to_string().contains("conflicts with"), "{err}");
}

#[test]
fn the_same_route_twice_is_a_conflict() {
    let err = App::new(|_| ()).route(about).route(about).build().unwrap_err();
    assert!(matches!(err, BuildError::Conflict { .. }), "{err}");
    assert!(err.to_string().matches("About").count() == 2, "{err}");
}

#[test]
fn a_trailing_slash_redirects_by_default_and_keeps_the_query() {
    let mut client = TestClient::new(app());
    let res = client.get("/about/?x=1");
    assert_eq!(res.status(), 308);
    assert_eq!(res.header("location"), Some("/about?x=1"));
}

#[test]
fn a_strict_trailing_slash_policy_gives_404() {
    let mut client = TestClient::new(app().trailing_slash(TrailingSlash::Strict));
    assert_eq!(client.get("/about/").status(), 404);
    assert_eq!(client.get("/about").status(), 200);
}

#[test]
fn unknown_paths_are_404_or_go_to_the_fallback() {
    let mut client = TestClient::new(app());
    let res = client.get("/nowhere");
    assert_eq!(res.status(), 404);
    assert_eq!(res.text(), "no route for /nowhere\n");

    async fn fallback(head: kiln::RequestHead) -> (StatusCode, String) {
        (StatusCode::NOT_FOUND, format!("nothing at {}", head.path()))
    }
    let mut client = TestClient::new(app().fallback(fallback));
    let res = client.request("PUT", "/nowhere").send();
    assert_eq!(res.status(), 404);
    assert_eq!(res.text(), "nothing at /nowhere");
}

#[test]
fn a_handler_asking_for_another_route_is_a_500() {
    async fn confused(_: About, _: Item) -> &'static str {
        "never"
    }
    let mut client = TestClient::new(App::new(|_| ()).route(confused));
    assert_eq!(client.get(&About).status(), 500);
}
