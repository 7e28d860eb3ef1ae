//! The cost of the document (issue 32, speed): building the document of a 100-route
//! app, and its reference page, timed. A benchmark, not a test: ignored, and run in a
//! release build, where the budget (10 ms at start) applies:
//!
//! ```sh
//! cargo test --release -p kiln --test openapi_speed -- --ignored --nocapture
//! ```
//!
//! The figures are in `bench/results/2026-11-27-openapi/README.md`.
#![cfg(all(feature = "openapi", feature = "validate"))]

#[macro_use]
mod openapi_support;

use std::time::{Duration, Instant};

use kiln::openapi::JsonSchema;
use kiln::{App, BearerToken, Json, Query, Rejection, Route, Valid};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Meta {
    #[garde(length(min = 1, max = 80))]
    title: String,
    #[garde(skip)]
    tags: Vec<String>,
    #[garde(range(max = 10))]
    rank: u8,
}

#[derive(Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Page {
    slug: String,
    summary: Option<String>,
    meta: Meta,
}

#[expect(dead_code, reason = "described, not read")]
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Paging {
    offset: Option<u32>,
    limit: Option<u32>,
}

/// A hundred routes. `plain`: each with a path parameter, a JSON body and a JSON
/// response (the foundation's measure). `rich`: each also with a query, a bearer
/// token, a validated body and a `Result`, under a problem+json prefix.
macro_rules! hundred_routes {
    ($($path:literal),*) => {
        fn plain() -> App<()> {
            let app = App::new(|_| ());
            $(
                let app = {
                    #[derive(Route)]
                    #[route(PUT, $path)]
                    struct R { id: u64 }
                    async fn handler(_: R, Json(meta): Json<Meta>) -> Json<Page> {
                        Json(Page { slug: String::new(), summary: None, meta })
                    }
                    app.api(handler)
                };
            )*
            app
        }

        fn rich() -> App<()> {
            let app = App::new(|_| ()).secret_key(kiln::Key::new([1u8; 32]).unwrap()).problem_json("/");
            $(
                let app = {
                    /// Replaces the page.
                    #[derive(Route)]
                    #[route(PUT, $path)]
                    struct R { id: u64 }
                    async fn handler(
                        _: R,
                        _: BearerToken,
                        _: Query<Paging>,
                        Valid(Json(meta)): Valid<Json<Meta>>,
                    ) -> Result<Json<Page>, Rejection> {
                        Ok(Json(Page { slug: String::new(), summary: None, meta }))
                    }
                    app.api(handler)
                };
            )*
            app
        }
    };
}

with_hundred_paths!(hundred_routes);

/// Times `f`: the first run, then the median and the fastest of `runs` more. Wall
/// clock: on a shared machine the median counts time other processes ran, and the
/// fastest is closest to the work itself.
fn time(runs: usize, mut f: impl FnMut()) -> [Duration; 3] {
    let mut once = || {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    let first = once();
    let mut times: Vec<Duration> = (0..runs).map(|_| once()).collect();
    times.sort();
    [first, times[runs / 2], times[0]]
}

/// One line of figures, in milliseconds.
fn report(what: &str, [first, median, fastest]: [Duration; 3]) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    eprintln!("{what}: first {:.2} ms, median {:.2} ms, fastest {:.2} ms", ms(first), ms(median), ms(fastest));
}

#[test]
#[ignore = "a benchmark: run with --release --ignored"]
fn a_hundred_route_document_builds_in_time() {
    let apps = [("plain", plain()), ("rich", rich())];
    for (name, app) in &apps {
        let times = time(50, || {
            let doc = app.openapi();
            assert_eq!(doc.json()["paths"].as_object().map(|p| p.len()), Some(100));
        });
        report(&format!("document, {name}"), times);
    }
    let times = time(20, || {
        let app = rich().openapi_routes("/openapi.json", "/docs", |doc| doc);
        app.build().expect("the app builds");
    });
    report("rich app built with its served document and page", times);
    let start = Instant::now();
    let doc = apps[1].1.openapi();
    assert!(start.elapsed() < Duration::from_secs(5), "a hang guard, not a measure");
    eprintln!("document size, rich: {} bytes", serde_json::to_vec(doc.json()).unwrap().len());
}

/// The rich app's document built once, at start, as an app would: run alone under
/// `perf stat -e task-clock` for the CPU time, which a loaded machine's wall clock
/// overstates; [`the_rich_app_alone`] is the same process without the document.
#[test]
#[ignore = "a benchmark: run alone with --release --ignored --exact"]
fn the_rich_document_once() {
    let app = rich();
    let start = Instant::now();
    let doc = app.openapi();
    let elapsed = start.elapsed();
    assert_eq!(doc.json()["paths"].as_object().map(|p| p.len()), Some(100));
    eprintln!("document, rich, once: {:.2} ms", elapsed.as_secs_f64() * 1000.0);
}

/// The baseline of [`the_rich_document_once`]: the same app, no document.
#[test]
#[ignore = "a benchmark: run alone with --release --ignored --exact"]
fn the_rich_app_alone() {
    let app = rich();
    assert!(format!("{app:?}").contains("/r99/{id}"));
}
