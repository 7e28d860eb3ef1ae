//! A JSON API for a front-end served from another origin: `cargo run --example
//! json_api`, then
//!
//! ```sh
//! TOKEN=$(curl -s -X POST -H 'Content-Type: application/json' \
//!     -d '{"user":"ada","password":"correct horse"}' http://127.0.0.1:3000/api/login | jq -r .token)
//! curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:3000/api/me
//! ```
//!
//! CORS lets `https://app.example` call it (preflights answered before routing),
//! tokens are signed with the app's key and expire after an hour, responses are
//! compressed as the client accepts, and `/metrics` counts it all. Its operations are
//! registered with `App::api`, so `app().openapi()` describes them from their types;
//! the document is committed as `examples/json_api.openapi.json`, and a test fails if
//! the two drift apart. Refusals are problem details (`application/problem+json`). `KILN_LISTEN` picks another address than `127.0.0.1:3000`.

use std::time::{Duration, UNIX_EPOCH};

use kiln::openapi::JsonSchema;
use kiln::rejection::Unauthorized;
use kiln::{App, BearerToken, Compression, Cors, Json, Key, Metrics, Rejection, Route};
use serde::{Deserialize, Serialize};

/// Logs in: a user's name and password for a bearer token.
#[derive(Route)]
#[route(POST, "/api/login")]
struct Login;

/// Who the bearer token says the caller is.
#[derive(Route)]
#[route("/api/me")]
struct Me;

/// What logging in takes.
#[derive(Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Credentials {
    /// The user's name.
    user: String,
    /// The user's password.
    password: String,
}

/// A bearer token: send it as `Authorization: Bearer {token}`.
#[derive(Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Token {
    /// The token, signed with the app's key.
    token: String,
    /// How many seconds it lasts.
    expires_in: u64,
}

/// The caller, as the token names them.
#[derive(Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Profile {
    /// The user the token was issued to.
    user: String,
    /// When the token expires, in Unix seconds.
    token_expires: u64,
}

/// How long a token lasts.
const TOKEN_TTL: Duration = Duration::from_secs(3600);

/// A real app checks a password hash (with `kiln::blocking`: hashing takes a while)
/// against its database.
fn password_is_right(user: &str, password: &str) -> bool {
    !user.is_empty() && password == "correct horse"
}

async fn login(_: Login, key: Key, Json(input): Json<Credentials>) -> Result<Json<Token>, Rejection> {
    let Credentials { user, password } = input;
    let checked = user.clone();
    if !kiln::blocking(move || password_is_right(&checked, &password)).await? {
        return Err(Unauthorized::missing("wrong user or password").into());
    }
    Ok(Json(Token { token: BearerToken::issue(&key, &user, TOKEN_TTL), expires_in: TOKEN_TTL.as_secs() }))
}

async fn me(_: Me, token: BearerToken) -> Json<Profile> {
    let token_expires = token.expires().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    Json(Profile { user: token.subject().to_owned(), token_expires })
}

/// The API, signing its tokens with `key`.
pub(crate) fn app(key: Key) -> App<()> {
    let cors = Cors::new()
        .allow_origins(["https://app.example"])
        .allow_methods(["GET", "POST"])
        .allow_headers(["content-type", "authorization"])
        .max_age(Duration::from_secs(600))
        .path_prefix("/api/");
    App::new(|_worker| ())
        .secret_key(key)
        .problem_json("/api")
        .api(login)
        .api(me)
        .cors(cors)
        .compression(Compression::new())
        .metrics(Metrics::new())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    // A real app reads its key from the environment or a file, so tokens outlive a
    // restart; a generated one is for trying it out.
    let key = match std::env::var("KILN_SECRET_KEY") {
        Ok(secret) => Key::new(secret)?,
        Err(_) => Key::generate(),
    };
    let listen = std::env::var("KILN_LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let server = kiln::http::Server::new().listen(listen);
    kiln::serve(app(key), server)?.run_until_signal()?;
    Ok(())
}
