//! `kiln::client::Client` (feature `client`) against an app served on 127.0.0.1: the
//! route, body and answer types are the handlers' own.

use kiln::client::Client;
use kiln::http::Server;
use kiln::rejection::Rejection;
use kiln::{App, Form, Json, Route, StatusCode};
use serde::{Deserialize, Serialize};

/// Adds two numbers.
#[derive(Route)]
#[route(POST, "/sum")]
struct Sum;

/// Greets, from a form.
#[derive(Route)]
#[route(POST, "/greet/{lang}")]
struct Greet {
    lang: String,
    loud: Option<bool>,
}

/// A number's half, or a 422 for an odd one.
#[derive(Route)]
#[route("/half/{n}")]
struct Half {
    n: u32,
}

#[derive(Serialize, Deserialize)]
struct Terms {
    a: i64,
    b: i64,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Total {
    sum: i64,
}

#[derive(Serialize, Deserialize)]
struct Name {
    name: String,
}

async fn sum(_: Sum, Json(t): Json<Terms>) -> Json<Total> {
    Json(Total { sum: t.a + t.b })
}

async fn greet(route: Greet, Form(who): Form<Name>) -> String {
    let hello = if route.lang == "fr" { "Bonjour" } else { "Hello" };
    let text = format!("{hello}, {}", who.name);
    if route.loud == Some(true) { text.to_uppercase() } else { text }
}

async fn half(route: Half) -> Result<Json<u32>, Rejection> {
    if route.n % 2 == 1 {
        return Err(Rejection::custom(StatusCode::UNPROCESSABLE_ENTITY, "odd"));
    }
    Ok(Json(route.n / 2))
}

#[test]
fn the_client_calls_a_handler_with_its_route_and_body_types() {
    let app = App::new(|_| ()).route(sum).route(greet).route(half);
    let serving = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).expect("serve");
    let client = Client::new(format!("http://{}/", serving.local_addr()));

    assert_eq!(client.call(sum, &Sum, Terms { a: 2, b: 3 }).expect("sum"), Total { sum: 5 });
    let greeting = client.call(greet, &Greet { lang: "fr".into(), loud: Some(true) }, Name { name: "Ada".into() });
    assert_eq!(greeting.expect("greet"), "BONJOUR, ADA");
    assert_eq!(client.call(half, &Half { n: 8 }, ()).expect("half"), 4);

    let odd = client.call(half, &Half { n: 7 }, ()).expect_err("odd");
    assert_eq!((odd.status(), odd.body().trim(), odd.is_transport()), (Some(422), "odd", false));

    serving.shutdown();
    serving.wait().expect("the server stops");
    let gone = client.call(half, &Half { n: 2 }, ()).expect_err("no server");
    assert!(gone.is_transport() && gone.status().is_none(), "{gone}");
}
