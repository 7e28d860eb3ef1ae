//! Issue 25: `?` on a `kiln::db::Error` in a handler that returns `Rejection` (or
//! `Result<_, E: IntoResponse>`), answered as the app renders its rejections: 404 for
//! a missing row, 409 for a conflict, 503 with `Retry-After` while the database is
//! unreachable.

use kiln::db::{Database, Db, Error, Migration, Options};
use kiln::test::TestClient;
use kiln::{App, Rejection, Response, Route, State};
use kiln_test_support::TempDir;

static SQLITE: &[Migration] = kiln::db::migrations!("tests/db_migrations/sqlite");

#[derive(Route)]
#[route("/users/{id}")]
struct ShowUser {
    id: i64,
}

#[derive(Route)]
#[route(POST, "/users/new/{name}")]
struct AddUser {
    name: String,
}

#[derive(Route)]
#[route("/outage")]
struct Outage;

async fn show(route: ShowUser, db: State<Db>) -> Result<String, Rejection> {
    let (name,): (String,) = db.query_one("SELECT user_name FROM users WHERE id = $1", &[&route.id]).await?;
    Ok(name)
}

async fn add(route: AddUser, db: State<Db>) -> Result<String, Rejection> {
    let id = db.insert("INSERT INTO users (user_name) VALUES ($1)", &[&route.name]).await?;
    Ok(format!("user {id}"))
}

/// A database that cannot be reached, as the driver reports it.
async fn unreachable() -> Result<(), Error> {
    Err(Error::Unavailable("connection refused".into()))
}

async fn outage(_: Outage) -> Result<&'static str, Rejection> {
    unreachable().await?;
    Ok("never")
}

/// The app's own rendering: `{"status": .., "error": ..}`.
fn as_json(rejection: &Rejection, res: &mut Response) {
    res.set_status(rejection.status());
    res.set_content_type("application/json");
    let body = format!(r#"{{"status":{},"error":"{rejection}"}}"#, rejection.status().as_u16());
    res.body_mut().extend_from_slice(body.as_bytes());
}

#[test]
fn question_mark_on_a_database_error_renders_the_apps_404_409_and_503() {
    let dir = TempDir::new("db-rejections");
    let database = Database::open(&dir.sqlite_url(), Options::default().migrations(SQLITE)).expect("open");
    let app = App::new(move |_| database.worker()).route(show).route(add).route(outage).on_rejection(as_json);
    let mut client = TestClient::new(app);

    let created = client.request("POST", &AddUser { name: "ada".into() }).send();
    assert_eq!((created.status().as_u16(), created.text()), (200, "user 1".to_owned()));
    assert_eq!(client.get(&ShowUser { id: 1 }).text(), "ada");

    let missing = client.get(&ShowUser { id: 2 });
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.header("content-type"), Some("application/json"));
    assert_eq!(missing.text(), r#"{"status":404,"error":"not found"}"#);

    let duplicate = client.request("POST", &AddUser { name: "ada".into() }).send();
    assert_eq!(duplicate.status(), 409);
    assert_eq!(duplicate.text(), r#"{"status":409,"error":"conflict: the change contradicts what is stored"}"#);

    let down = client.get(&Outage);
    assert_eq!(down.status(), 503);
    assert_eq!(down.header("retry-after"), Some("1"));
    // The driver's message stays in the log, not in the answer.
    assert_eq!(down.text(), r#"{"status":503,"error":"database unavailable, try again"}"#);
}

#[test]
fn a_database_error_returned_as_is_renders_as_the_same_rejection() {
    #[derive(Route)]
    #[route("/plain")]
    struct Plain;
    async fn plain(_: Plain) -> Result<&'static str, Error> {
        Err(Error::NotFound)
    }
    let mut client = TestClient::new(App::new(|_| ()).route(plain).on_rejection(as_json));
    let res = client.get(&Plain);
    assert_eq!((res.status().as_u16(), res.text()), (404, r#"{"status":404,"error":"not found"}"#.to_owned()));
}

/// An app's own error type, as users write one: `?` on a database error needs only
/// `From<kiln::db::Error>`, and answering it as the database error answers renders the
/// app's page.
enum AppError {
    Db(Error),
    TooShort,
}

impl From<Error> for AppError {
    fn from(e: Error) -> Self {
        AppError::Db(e)
    }
}

impl kiln::IntoResponse for AppError {
    fn into_response(self, res: &mut Response) {
        match self {
            AppError::Db(e) => e.into_response(res),
            AppError::TooShort => {
                Rejection::custom(kiln::StatusCode::UNPROCESSABLE_ENTITY, "name too short").into_response(res)
            }
        }
    }
}

#[derive(Route)]
#[route("/v2/users/{id}")]
struct ShowUserV2 {
    id: i64,
}

#[derive(Route)]
#[route(POST, "/v2/users/new/{name}")]
struct AddUserV2 {
    name: String,
}

#[derive(Route)]
#[route("/v2/outage")]
struct OutageV2;

async fn show_v2(route: ShowUserV2, db: State<Db>) -> Result<String, AppError> {
    let (name,): (String,) = db.query_one("SELECT user_name FROM users WHERE id = $1", &[&route.id]).await?;
    Ok(name)
}

async fn add_v2(route: AddUserV2, db: State<Db>) -> Result<String, AppError> {
    if route.name.len() < 2 {
        return Err(AppError::TooShort);
    }
    let id = db.insert("INSERT INTO users (user_name) VALUES ($1)", &[&route.name]).await?;
    Ok(format!("user {id}"))
}

async fn outage_v2(_: OutageV2) -> Result<&'static str, AppError> {
    unreachable().await?;
    Ok("never")
}

#[test]
fn question_mark_on_a_database_error_into_the_apps_own_error_type_renders_the_apps_404_409_and_503() {
    let dir = TempDir::new("db-rejections-app-error");
    let database = Database::open(&dir.sqlite_url(), Options::default().migrations(SQLITE)).expect("open");
    let app = App::new(move |_| database.worker()).route(show_v2).route(add_v2).route(outage_v2).on_rejection(as_json);
    let mut client = TestClient::new(app);

    assert_eq!(client.request("POST", &AddUserV2 { name: "ada".into() }).send().text(), "user 1");
    let missing = client.get(&ShowUserV2 { id: 2 });
    assert_eq!((missing.status().as_u16(), missing.text()), (404, r#"{"status":404,"error":"not found"}"#.to_owned()));
    let duplicate = client.request("POST", &AddUserV2 { name: "ada".into() }).send();
    assert_eq!(duplicate.status(), 409);
    assert_eq!(duplicate.header("content-type"), Some("application/json"));
    let down = client.get(&OutageV2);
    assert_eq!((down.status().as_u16(), down.header("retry-after")), (503, Some("1")));
    assert_eq!(down.text(), r#"{"status":503,"error":"database unavailable, try again"}"#);
    let short = client.request("POST", &AddUserV2 { name: "a".into() }).send();
    assert_eq!((short.status().as_u16(), short.text()), (422, r#"{"status":422,"error":"name too short"}"#.to_owned()));
}
