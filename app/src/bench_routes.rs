//! The benchmark endpoints: `/pong`, `/hello`, `/plaintext`, `/json`, `/bigtable` and
//! the WebSocket echo `/ws/echo`.

use kiln::markup::{Flow, Fragment, Reserve};
use kiln::rejection::{InvalidQuery, Rejection};
use kiln::ws::WebSocketUpgrade;
use kiln::{App, IntoResponse, Json, Route, html};
use serde::Serialize;

/// Most rows `/bigtable` renders; more is refused with 400.
pub(crate) const MAX_ROWS: u32 = 10_000;
/// Most columns `/bigtable` renders; more is refused with 400.
pub(crate) const MAX_COLS: u32 = 1_000;
/// Rows when the query names none.
const DEFAULT_ROWS: u32 = 1000;
/// Columns when the query names none.
const DEFAULT_COLS: u32 = 50;
/// Most cells (rows × columns) one table holds, about 1.2 MB of HTML; more is refused
/// with 400, since 10,000 × 1,000 built 119 MB for one request (issue 13).
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

/// The WebSocket echo: every text and binary message sent back as it came, compressed
/// when the client offers permessage-deflate (what the Autobahn testsuite runs against).
#[derive(Route)]
#[route("/ws/echo")]
pub(crate) struct WsEcho;

/// Yesod's bigtable: `rows` × `cols`, each cell its column number.
#[derive(Route)]
#[route("/bigtable")]
pub(crate) struct BigTable {
    /// Rows, 0..=`MAX_ROWS` (default 1000), at most `MAX_CELLS` with the columns.
    pub(crate) rows: Option<u32>,
    /// Columns, 0..=`MAX_COLS` (default 50).
    pub(crate) cols: Option<u32>,
}

/// The size of the table `/bigtable` renders, within the limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TableSize {
    rows: u32,
    cols: u32,
}

impl TableSize {
    /// `rows` × `cols`, or the refusal that names every limit.
    fn checked(rows: u32, cols: u32) -> Result<TableSize, InvalidQuery> {
        if rows > MAX_ROWS || cols > MAX_COLS || u64::from(rows) * u64::from(cols) > u64::from(MAX_CELLS) {
            return Err(InvalidQuery::new(format!(
                "bigtable is limited to {MAX_ROWS} rows, {MAX_COLS} columns and {MAX_CELLS} cells \
                 (rows × columns); {rows} × {cols} is over"
            )));
        }
        Ok(TableSize { rows, cols })
    }
}

/// Adds the benchmark routes to an app of any state.
pub(crate) fn mount<S: 'static>(app: App<S>) -> App<S> {
    app.route(pong).route(hello).route(plaintext).route(json).route(bigtable).route(ws_echo)
}

async fn ws_echo(_: WsEcho, ws: WebSocketUpgrade) -> impl IntoResponse {
    // Autobahn's 9.* cases send messages and frames of up to 16 MiB (the default is 1 MiB).
    ws.max_frame(16 << 20).max_message(16 << 20).on_upgrade(|mut socket| async move {
        while let Some(msg) = socket.recv().await {
            if socket.send(msg).await.is_err() {
                break;
            }
        }
    })
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

/// A size over the limits is a `Rejection`, so the app renders it as it renders a
/// `rows` that is not a number: the route's 400s all look alike (the site's error
/// page, in the demo).
async fn bigtable(route: BigTable) -> Result<Fragment<Flow>, Rejection> {
    let TableSize { rows, cols } =
        TableSize::checked(route.rows.unwrap_or(DEFAULT_ROWS), route.cols.unwrap_or(DEFAULT_COLS))?;
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
        for (rows, cols) in [(0, 0), (1, 1), (3, 9), (1000, 50), (2, 1000), (10, 100), (100, 1000)] {
            let page = poll_once(bigtable(BigTable { rows: Some(rows), cols: Some(cols) }));
            let len = page.unwrap_or_else(|e| panic!("{rows}x{cols} refused: {e}")).as_str().len();
            let reserved = table_bytes(rows, cols);
            assert!(len <= reserved, "{rows}x{cols}: rendered {len} > reserved {reserved}");
            assert!(reserved - len <= rows as usize * cols as usize * 3 + 16, "{rows}x{cols}: far too generous");
        }
    }

    /// The audit's `rows=200&cols=1000` came back with 100 rows and no word why; the
    /// 400 named the row and column limits but not the cells'.
    #[test]
    fn a_table_over_the_cell_limit_is_refused_not_cut() {
        let cells = MAX_CELLS / MAX_COLS;
        assert_eq!(TableSize::checked(cells, MAX_COLS), Ok(TableSize { rows: cells, cols: MAX_COLS }));
        assert_eq!(TableSize::checked(MAX_ROWS, MAX_CELLS / MAX_ROWS), Ok(TableSize { rows: MAX_ROWS, cols: 10 }));
        for (rows, cols) in
            [(cells + 1, MAX_COLS), (200, 1000), (MAX_ROWS, MAX_COLS), (MAX_ROWS + 1, 1), (1, MAX_COLS + 1)]
        {
            let refusal = TableSize::checked(rows, cols).expect_err("over a limit");
            let message = refusal.message();
            assert!(message.contains("10000 rows, 1000 columns and 100000 cells"), "{rows}x{cols}: {message}");
            assert!(message.contains(&format!("{rows} × {cols}")), "{message}");
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
