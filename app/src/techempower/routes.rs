//! The database benchmark endpoints: TechEmpower's `/db`, `/queries`, `/fortunes`,
//! `/updates` and `/cached-queries`, and the non-blocking report's `/mix/async` and
//! `/mix/blocking`.

use std::fmt;
use std::str::FromStr;

use kiln::db::Error;
use kiln::markup::{Document, Fragment};
use kiln::{App, Json, Route, State, html};

use super::model::{ADDED_FORTUNE, Fortune, MAX_ROWS, World};
use super::queries::Bench;
use crate::state::Worker;

/// TechEmpower's `queries`/`count` parameter: a number clamped to `1..=500`, with
/// anything unparsable (`foo`, an empty value) counting as 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Count(usize);

impl Count {
    fn get(count: Option<Count>) -> usize {
        count.map_or(1, |c| c.0)
    }
}

impl FromStr for Count {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let n = s.trim().parse::<i64>().unwrap_or(1);
        Ok(Count(n.clamp(1, MAX_ROWS as i64) as usize))
    }
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// One random world row.
#[derive(Route)]
#[route("/db")]
pub(crate) struct SingleQuery;

/// `queries` random world rows, each read with its own query.
#[derive(Route)]
#[route("/queries")]
pub(crate) struct Queries {
    pub(crate) queries: Option<Count>,
}

/// The fortune table plus one, sorted and escaped, as HTML.
#[derive(Route)]
#[route("/fortunes")]
pub(crate) struct Fortunes;

/// `queries` rows read, given new random numbers and written back in one batch.
#[derive(Route)]
#[route("/updates")]
pub(crate) struct Updates {
    pub(crate) queries: Option<Count>,
}

/// `count` random rows from the worker's in-memory copy of the world table.
#[derive(Route)]
#[route("/cached-queries")]
pub(crate) struct CachedQueries {
    pub(crate) count: Option<Count>,
}

/// A short query per request, a long one every `every`-th, awaited without blocking.
#[derive(Route)]
#[route("/mix/async")]
pub(crate) struct MixAsync {
    /// Every how many requests the long query runs (default 10).
    pub(crate) every: Option<u64>,
}

/// As [`MixAsync`], but the worker thread blocks on each query.
#[derive(Route)]
#[route("/mix/blocking")]
pub(crate) struct MixBlocking {
    /// Every how many requests the long query runs (default 10).
    pub(crate) every: Option<u64>,
}

/// Every how many `/mix` requests the long query runs when the query names none.
const DEFAULT_EVERY: u64 = 10;

/// Adds the database benchmark routes.
pub(crate) fn mount(app: App<Worker>) -> App<Worker> {
    app.route(single_query)
        .route(queries)
        .route(fortunes)
        .route(updates)
        .route(cached_queries)
        .route(mix_async)
        .route(mix_blocking)
}

async fn single_query(_: SingleQuery, w: State<Worker>) -> Result<Json<World>, Error> {
    w.bench.random_world(&w.db).await.map(Json)
}

async fn queries(route: Queries, w: State<Worker>) -> Result<Json<Vec<World>>, Error> {
    w.bench.worlds(&w.db, Count::get(route.queries)).await.map(Json)
}

async fn updates(route: Updates, w: State<Worker>) -> Result<Json<Vec<World>>, Error> {
    w.bench.update_worlds(&w.db, Count::get(route.queries)).await.map(Json)
}

async fn cached_queries(route: CachedQueries, w: State<Worker>) -> Result<Json<Vec<World>>, Error> {
    w.bench.cached_worlds(&w.db, Count::get(route.count)).await.map(Json)
}

async fn fortunes(_: Fortunes, w: State<Worker>) -> Result<Fragment<Document>, Error> {
    let mut fortunes = Bench::fortunes(&w.db).await?;
    fortunes.push(Fortune { id: 0, message: ADDED_FORTUNE.to_owned() });
    fortunes.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    Ok(fortunes_page(&fortunes))
}

async fn mix_async(route: MixAsync, w: State<Worker>) -> Result<Json<Vec<World>>, Error> {
    let long = w.bench.mix.is_long(route.every.unwrap_or(DEFAULT_EVERY));
    w.bench.mix.run(&w.db, w.bench.random_id(), long).await.map(Json)
}

async fn mix_blocking(route: MixBlocking, w: State<Worker>) -> Result<Json<Vec<World>>, Error> {
    let long = w.bench.mix.is_long(route.every.unwrap_or(DEFAULT_EVERY));
    // Deliberately synchronous: the worker serves nothing else until it returns.
    w.bench.mix.run_blocking(w.bench.random_id(), long, w.query_timeout).map(Json)
}

/// The fortunes page, in checked markup (`kiln::html!`): the fixed markup merged at
/// compile time, ids through the fast integer path, every message escaped.
fn fortunes_page(fortunes: &[Fortune]) -> Fragment<Document> {
    html! {
        html lang="en" {
            head { title { "Fortunes" } }
            body {
                table {
                    tr { th { "id" } th { "message" } }
                    @for fortune in fortunes {
                        tr { td { (fortune.id) } td { (fortune.message) } }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fortunes_page_renders_techempowers_table_with_messages_escaped() {
        let fortunes = [
            Fortune {
                id: 11,
                message: "<script>alert(\"This should not be displayed in a browser alert box.\");</script>".into(),
            },
            Fortune { id: 4, message: "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1".into() },
            Fortune { id: 12, message: "フレームワークのベンチマーク".into() },
        ];
        assert_eq!(
            fortunes_page(&fortunes).as_str(),
            concat!(
                "<!DOCTYPE html><html lang=\"en\"><head><title>Fortunes</title></head><body><table>",
                "<tr><th>id</th><th>message</th></tr>",
                "<tr><td>11</td><td>&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);&lt;/script&gt;</td></tr>",
                "<tr><td>4</td><td>A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1</td></tr>",
                "<tr><td>12</td><td>フレームワークのベンチマーク</td></tr>",
                "</table></body></html>"
            )
        );
    }

    #[test]
    fn counts_clamp_and_default_to_one() {
        for (raw, n) in [("0", 1), ("foo", 1), ("", 1), ("-3", 1), ("1", 1), ("20", 20), ("500", 500), ("501", 500)] {
            assert_eq!(Count::from_str(raw).map(|c| c.0), Ok(n), "{raw:?}");
        }
        assert_eq!(Count::get(None), 1);
        assert_eq!(Count::from_str("99999999999999999999").map(|c| c.0), Ok(1));
    }

    #[test]
    fn fortunes_page_escapes_every_message() {
        let page = fortunes_page(&[Fortune { id: 11, message: "<script>\"&'</script>".into() }]);
        let html = page.into_string();
        assert!(html.contains("<tr><td>11</td><td>&lt;script&gt;&quot;&amp;'&lt;/script&gt;</td></tr>"), "{html}");
    }
}
