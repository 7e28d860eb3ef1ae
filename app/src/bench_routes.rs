//! The benchmark endpoints: `/pong`, `/hello`, `/plaintext`, `/json` and `/bigtable`.

use kiln::maud::html;
use kiln::{App, Html, Json, Route, StatusCode};
use serde::Serialize;

/// Most rows `/bigtable` renders; more is refused with 400.
pub(crate) const MAX_ROWS: u32 = 10_000;
/// Most columns `/bigtable` renders; more is refused with 400.
pub(crate) const MAX_COLS: u32 = 1_000;
/// Rows when the query names none.
const DEFAULT_ROWS: u32 = 1000;
/// Columns when the query names none.
const DEFAULT_COLS: u32 = 50;

/// Snap's pong.
#[derive(Route)]
#[route("/pong")]
pub(crate) struct Pong;

/// The hello-world round-up's 12 bytes.
#[derive(Route)]
#[route("/hello")]
pub(crate) struct Hello;

/// TechEmpower's plaintext.
#[derive(Route)]
#[route("/plaintext")]
pub(crate) struct Plaintext;

/// TechEmpower's JSON serialisation.
#[derive(Route)]
#[route("/json")]
pub(crate) struct JsonMessage;

/// Yesod's bigtable: `rows` × `cols`, each cell its column number.
#[derive(Route)]
#[route("/bigtable")]
pub(crate) struct BigTable {
    /// Rows, 0..=`MAX_ROWS` (default 1000).
    pub(crate) rows: Option<u32>,
    /// Columns, 0..=`MAX_COLS` (default 50).
    pub(crate) cols: Option<u32>,
}

/// Adds the benchmark routes to an app of any state.
pub(crate) fn mount<S: 'static>(app: App<S>) -> App<S> {
    app.route(pong).route(hello).route(plaintext).route(json).route(bigtable)
}

async fn pong(_: Pong) -> &'static str {
    "PONG"
}

async fn hello(_: Hello) -> &'static str {
    "Hello World!"
}

async fn plaintext(_: Plaintext) -> &'static str {
    "Hello, World!"
}

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

async fn json(_: JsonMessage) -> Json<Message> {
    Json(Message { message: "Hello, World!" })
}

async fn bigtable(route: BigTable) -> Result<Html<kiln::maud::Markup>, (StatusCode, String)> {
    let rows = route.rows.unwrap_or(DEFAULT_ROWS);
    let cols = route.cols.unwrap_or(DEFAULT_COLS);
    if rows > MAX_ROWS || cols > MAX_COLS {
        let msg = format!("bigtable is limited to {MAX_ROWS} rows and {MAX_COLS} columns\n");
        return Err((StatusCode::BAD_REQUEST, msg));
    }
    Ok(Html(html! {
        table {
            @for _ in 0..rows {
                tr {
                    @for col in 1..=cols {
                        td { (col) }
                    }
                }
            }
        }
    }))
}
