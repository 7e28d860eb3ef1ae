//! The benchmark endpoints: `/pong`, `/hello`, `/plaintext`, `/json` and `/bigtable`.

use kiln::markup::{Flow, Fragment, Reserve};
use kiln::{App, Json, Route, StatusCode, html};
use serde::Serialize;

/// Most rows `/bigtable` renders; more is refused with 400.
pub(crate) const MAX_ROWS: u32 = 10_000;
/// Most columns `/bigtable` renders; more is refused with 400.
pub(crate) const MAX_COLS: u32 = 1_000;
/// Rows when the query names none.
const DEFAULT_ROWS: u32 = 1000;
/// Columns when the query names none.
const DEFAULT_COLS: u32 = 50;
/// Most cells one table holds (about 1.2 MB of HTML); rows beyond it are dropped, since
/// 10,000 × 1,000 built 119 MB for one request (issue 13).
const MAX_CELLS: u32 = 100_000;

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

/// An upper bound on the rendered table's size, so that its buffer grows once.
fn table_bytes(rows: u32, cols: u32) -> usize {
    let digits = cols.max(1).ilog10() as usize + 1;
    let row = "<tr></tr>".len() + cols as usize * ("<td></td>".len() + digits);
    "<table></table>".len() + rows as usize * row
}

async fn bigtable(route: BigTable) -> Result<Fragment<Flow>, (StatusCode, String)> {
    let rows = route.rows.unwrap_or(DEFAULT_ROWS);
    let cols = route.cols.unwrap_or(DEFAULT_COLS);
    if rows > MAX_ROWS || cols > MAX_COLS {
        let msg = format!("bigtable is limited to {MAX_ROWS} rows and {MAX_COLS} columns\n");
        return Err((StatusCode::BAD_REQUEST, msg));
    }
    let rows = rows.min(MAX_CELLS / cols.max(1));
    Ok(html! {
        table {
            (Reserve(table_bytes(rows, cols)))
            @for _ in 0..rows {
                tr {
                    @for col in 1..=cols {
                        td { (col) }
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserved_size_bounds_the_rendered_table() {
        for (rows, cols) in [(0, 0), (1, 1), (3, 9), (1000, 50), (2, 1000), (10, 100)] {
            let page = poll_once(bigtable(BigTable { rows: Some(rows), cols: Some(cols) }));
            let len = page.map(|table| table.as_str().len()).unwrap_or_else(|_| panic!("{rows}x{cols} refused"));
            let reserved = table_bytes(rows, cols);
            assert!(len <= reserved, "{rows}x{cols}: rendered {len} > reserved {reserved}");
            assert!(reserved - len <= rows as usize * cols as usize * 3 + 16, "{rows}x{cols}: far too generous");
        }
    }

    /// The handler never awaits, so one poll completes it.
    fn poll_once<F: std::future::Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(out) => out,
            std::task::Poll::Pending => panic!("the handler awaited"),
        }
    }
}
