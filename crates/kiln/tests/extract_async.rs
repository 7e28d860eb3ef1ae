//! Issue 25: an extractor that awaits (`FromRequestAsync`): a bearer token looked up in
//! the database before the handler runs, its refusal rendered as the app renders
//! rejections, beside synchronous extractors in the same handler.

use kiln::db::{Database, Db, Migration, Options};
use kiln::rejection::Unauthorized;
use kiln::test::TestClient;
use kiln::{App, FromRequestAsync, Query, Rejection, RequestContext, Response, Route, State};
use kiln_test_support::TempDir;
use serde::Deserialize;

static SQLITE: &[Migration] = kiln::db::migrations!("tests/db_migrations/sqlite");

/// The user whose token (here, the `email` column) the request carries.
struct Caller {
    name: String,
}

impl FromRequestAsync<Db> for Caller {
    async fn from_request_async(cx: RequestContext<'_, Db>) -> Result<Self, Rejection> {
        let token = cx
            .request()
            .header_str("authorization")
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(|| Unauthorized::missing("a bearer token is required"))?;
        let found = cx.state().query_one("SELECT user_name FROM users WHERE email = $1", &[&token]).await;
        match found {
            Ok((name,)) => Ok(Caller { name }),
            Err(kiln::db::Error::NotFound) => Err(Unauthorized::invalid_token("unknown token").into()),
            Err(e) => Err(e.into()),
        }
    }
}

#[derive(Route)]
#[route("/me")]
struct Me;

#[derive(Deserialize)]
struct Greeting {
    word: String,
}

async fn me(_: Me, caller: Caller) -> String {
    caller.name
}

#[derive(Route)]
#[route("/greet")]
struct Greet;

/// A synchronous extractor on each side of the async one.
async fn greet(_: Greet, Query(greeting): Query<Greeting>, caller: Caller) -> String {
    format!("{}, {}", greeting.word, caller.name)
}

#[derive(Route)]
#[route("/hello")]
struct Hello;

/// A page for everyone that greets a known caller by name.
async fn hello(_: Hello, caller: Option<Caller>) -> String {
    caller.map_or_else(|| "hello, stranger".to_owned(), |c| format!("hello, {}", c.name))
}

#[derive(Route)]
#[route("/whoami")]
struct WhoAmI;

/// The handler decides what a refusal means: here, the rejection's own words with its status.
async fn whoami(_: WhoAmI, caller: Result<Caller, Rejection>) -> (kiln::StatusCode, String) {
    match caller {
        Ok(c) => (kiln::StatusCode::OK, c.name),
        Err(e) => (kiln::StatusCode::IM_A_TEAPOT, format!("{}: {e}", e.status().as_u16())),
    }
}

fn as_json(rejection: &Rejection, res: &mut Response) {
    res.set_status(rejection.status());
    res.set_content_type("application/json");
    let body = format!(r#"{{"status":{},"error":"{rejection}"}}"#, rejection.status().as_u16());
    res.body_mut().extend_from_slice(body.as_bytes());
}

#[derive(Route)]
#[route(POST, "/users/{name}/{token}")]
struct AddUser {
    name: String,
    token: String,
}

async fn add(route: AddUser, db: State<Db>) -> Result<(), Rejection> {
    db.execute("INSERT INTO users (user_name, email) VALUES ($1, $2)", &[&route.name, &route.token]).await?;
    Ok(())
}

/// An app whose database knows `ada` by the token `t-ada`.
fn client(dir: &TempDir) -> TestClient<kiln::AppService<Db>> {
    let database = Database::open(&dir.sqlite_url(), Options::default().migrations(SQLITE)).expect("open");
    let app = App::new(move |_| database.worker())
        .route(me)
        .route(greet)
        .route(add)
        .route(hello)
        .route(whoami)
        .on_rejection(as_json);
    let mut client = TestClient::new(app);
    let added = client.request("POST", &AddUser { name: "ada".into(), token: "t-ada".into() }).send();
    assert_eq!(added.status(), 200);
    client
}

#[test]
fn an_async_extractor_reads_the_database_before_the_handler() {
    let dir = TempDir::new("extract-async");
    let mut client = client(&dir);
    let res = client.request("GET", &Me).header("authorization", "Bearer t-ada").send();
    assert_eq!((res.status().as_u16(), res.text()), (200, "ada".to_owned()));
    let res = client.request("GET", "/greet?word=hello").header("authorization", "Bearer t-ada").send();
    assert_eq!((res.status().as_u16(), res.text()), (200, "hello, ada".to_owned()));
}

#[test]
fn an_async_extractors_refusal_renders_the_apps_error_page() {
    let dir = TempDir::new("extract-async-refused");
    let mut client = client(&dir);
    let unknown = client.request("GET", &Me).header("authorization", "Bearer nobody").send();
    assert_eq!(unknown.status(), 401);
    assert_eq!(unknown.header("content-type"), Some("application/json"));
    assert_eq!(unknown.text(), r#"{"status":401,"error":"unknown token"}"#);
    // RFC 9110 §15.5.2: the 401 carries its challenge, as a synchronous one does.
    assert!(unknown.header("www-authenticate").is_some_and(|c| c.starts_with("Bearer")));
    let missing = client.get(&Me);
    assert_eq!(missing.text(), r#"{"status":401,"error":"a bearer token is required"}"#);
    // A synchronous extractor before it refuses first, with its own rejection.
    let bad_query = client.request("GET", "/greet").header("authorization", "Bearer t-ada").send();
    assert_eq!(bad_query.status(), 400);
}

#[test]
fn option_of_an_async_extractor_is_none_when_it_refuses_and_some_when_it_passes() {
    // Issue 33: `Option<Caller>` was refused at compile time ("`Caller` does not
    // implement `FromRequest<Db>`") though `Caller` alone was an argument.
    let dir = TempDir::new("extract-async-option");
    let mut client = client(&dir);
    let known = client.request("GET", &Hello).header("authorization", "Bearer t-ada").send();
    assert_eq!((known.status().as_u16(), known.text()), (200, "hello, ada".to_owned()));
    let unknown = client.request("GET", &Hello).header("authorization", "Bearer nobody").send();
    assert_eq!((unknown.status().as_u16(), unknown.text()), (200, "hello, stranger".to_owned()));
    let anonymous = client.get(&Hello);
    assert_eq!((anonymous.status().as_u16(), anonymous.text()), (200, "hello, stranger".to_owned()));
}

#[test]
fn result_of_an_async_extractor_hands_the_handler_its_rejection() {
    let dir = TempDir::new("extract-async-result");
    let mut client = client(&dir);
    let known = client.request("GET", &WhoAmI).header("authorization", "Bearer t-ada").send();
    assert_eq!((known.status().as_u16(), known.text()), (200, "ada".to_owned()));
    let unknown = client.request("GET", &WhoAmI).header("authorization", "Bearer nobody").send();
    assert_eq!((unknown.status().as_u16(), unknown.text()), (418, "401: unknown token".to_owned()));
    let missing = client.get(&WhoAmI);
    assert_eq!(missing.text(), "401: a bearer token is required");
}
