//! Which rate limits a request pays for is decided per route when the app is built
//! (so a limit on one route costs the others nothing), and that decision never lets
//! a request that a limit covers through: a prefix that ends inside a capture, a
//! catch-all, a method-scoped limit, a route-scoped one and unrouted requests.

use kiln::test::TestClient;
use kiln::{App, Method, RateLimit, Route};

#[derive(Route)]
#[route("/api/{version}/items")]
struct Items {
    version: String,
}

#[derive(Route)]
#[route("/files/{*rest}")]
struct Files {
    rest: String,
}

#[derive(Route)]
#[route(POST, "/login")]
struct Login;

#[derive(Route)]
#[route("/pong")]
struct Pong;

async fn items(items: Items) -> String {
    format!("{}\n", items.version)
}

async fn files(files: Files) -> String {
    format!("{}\n", files.rest)
}

async fn login(_: Login) -> &'static str {
    "welcome\n"
}

async fn pong(_: Pong) -> &'static str {
    "pong\n"
}

fn app() -> App<()> {
    App::new(|_| ()).route(items).route(files).route(login).route(pong)
}

#[test]
fn a_limit_is_decided_per_route_at_build_time() {
    let limits = app()
        .rate_limit(RateLimit::per_minute(1).path_prefix("/api/v1"))
        .rate_limit(RateLimit::per_minute(1).path_prefix("/files/private/"))
        .rate_limit(RateLimit::per_minute(1).route::<Login>());
    let mut client = TestClient::new(limits);
    let v1 = Items { version: "v1".into() };
    let v2 = Items { version: "v2".into() };
    assert_eq!([client.get(&v1).status(), client.get(&v1).status()], [200, 429], "a prefix inside a capture");
    assert!((0..3).all(|_| client.get(&v2).status() == 200), "the same route, another path: not covered");
    let private = Files { rest: "private/a".into() };
    let public = Files { rest: "public/a".into() };
    assert_eq!([client.get(&private).status(), client.get(&private).status()], [200, 429], "a catch-all");
    assert!((0..3).all(|_| client.get(&public).status() == 200));
    let post = |client: &mut TestClient<_>| client.request("POST", &Login).send().status();
    assert_eq!([post(&mut client), post(&mut client)], [200, 429], "a route-scoped limit");
    assert!((0..3).all(|_| client.get(&Pong).status() == 200), "a route no limit names");
}

#[test]
fn a_method_scoped_limit_covers_the_routes_that_take_its_methods_and_unrouted_requests() {
    let limits = app().rate_limit(RateLimit::per_minute(1).methods([Method::POST]));
    let mut client = TestClient::new(limits);
    let post = |client: &mut TestClient<_>| client.request("POST", &Login).send().status();
    assert_eq!([post(&mut client), post(&mut client)], [200, 429]);
    assert!((0..3).all(|_| client.get(&Pong).status() == 200), "GET routes are not covered");
    let mut other = TestClient::new(app().rate_limit(RateLimit::per_minute(1).methods([Method::POST])));
    let nowhere = |client: &mut TestClient<_>| client.request("POST", "/nowhere").send().status();
    assert_eq!([nowhere(&mut other), nowhere(&mut other)], [404, 429], "an unrouted request is covered");
    let mut scoped = TestClient::new(app().rate_limit(RateLimit::per_minute(1).route::<Login>()));
    assert!((0..3).all(|_| nowhere(&mut scoped) == 404), "a route-scoped limit does not cover unrouted requests");
}
