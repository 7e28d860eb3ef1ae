//! The database endpoints of the real `kiln-demo` binary, on SQLite and (with
//! `KILN_PG_URL`) PostgreSQL, held to TechEmpower's rules.

use kiln::db::{Database, FromRow, Options};
use kiln_test_support::{Server, TempDir, on_worker, pg_url};
use serde_json::Value;

/// The twelve fortunes the migration seeds.
const FORTUNES: [(i32, &str); 12] = [
    (1, "fortune: No such file or directory"),
    (2, "A computer scientist is someone who fixes things that aren't broken."),
    (3, "After enough decimal places, nobody gives a damn."),
    (4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"),
    (5, "A computer program does what you tell it to do, not what you want it to do."),
    (6, "Emacs is a nice operating system, but I prefer UNIX. \u{2014} Tom Christaensen"),
    (7, "Any program that runs right is obsolete."),
    (8, "A list is only as strong as its weakest link. \u{2014} Donald Knuth"),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (11, "<script>alert(\"This should not be displayed in a browser alert box.\");</script>"),
    (12, "フレームワークのベンチマーク"),
];

/// The fortune `/fortunes` adds at request time.
const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, FromRow)]
struct World {
    id: i32,
    #[from_row(rename = "randomnumber")]
    random_number: i32,
}

fn start(database: &str) -> Server {
    Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &["--workers", "2", "--database", database, "--long-query-ms", "5"])
}

/// (query string, rows expected): clamped to 1..=500, anything unparsable counts as 1.
const COUNTS: [(&str, usize); 10] = [
    ("", 1),
    ("=", 1),
    ("=0", 1),
    ("=foo", 1),
    ("=-5", 1),
    ("=1", 1),
    ("=20", 20),
    ("=500", 500),
    ("=501", 500),
    ("=99999999999999999999", 1),
];

fn world(v: &Value) -> World {
    let obj = v.as_object().unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(obj.len(), 2, "exactly id and randomNumber: {v}");
    let field = |name: &str| obj[name].as_i64().unwrap_or_else(|| panic!("no {name}: {v}")) as i32;
    let w = World { id: field("id"), random_number: field("randomNumber") };
    assert!((1..=10_000).contains(&w.id) && (1..=10_000).contains(&w.random_number), "{v}");
    w
}

fn worlds(v: &Value) -> Vec<World> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}")).iter().map(world).collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn check_endpoints(server: &Server, database: &str) {
    let res = server.get("/db");
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("Content-Type"), Some("application/json"));
    assert!(res.header("Server").is_some() && res.header("Date").is_some());
    world(&res.json());

    for (path, key) in [("/queries", "queries"), ("/cached-queries", "count")] {
        for (query, n) in COUNTS {
            let target = if query.is_empty() { path.to_owned() } else { format!("{path}?{key}{query}") };
            let res = server.get(&target);
            assert_eq!(res.status, 200, "{target}: {}", res.text());
            assert_eq!(res.header("Content-Type"), Some("application/json"), "{target}");
            assert_eq!(worlds(&res.json()).len(), n, "{target}");
        }
    }

    let res = server.get("/fortunes");
    assert_eq!(res.status, 200);
    assert_eq!(res.header("Content-Type"), Some("text/html; charset=utf-8"));
    let html = res.text();
    assert!(!html.contains("<script>"), "the <script> fortune must be escaped");
    assert!(html.contains("フレームワークのベンチマーク"), "the UTF-8 fortune intact");
    let rows: Vec<(i32, &str)> = html
        .split("<tr><td>")
        .skip(1)
        .map(|row| {
            let (id, rest) = row.split_once("</td><td>").expect("two cells");
            (id.parse().expect("id"), rest.split_once("</td></tr>").expect("row end").0)
        })
        .collect();
    let mut expected: Vec<(i32, &str)> = FORTUNES.to_vec();
    expected.push((0, ADDED_FORTUNE));
    expected.sort_by(|a, b| a.1.cmp(b.1));
    let expected: Vec<(i32, String)> = expected.into_iter().map(|(id, m)| (id, escape(m))).collect();
    let rows: Vec<(i32, String)> = rows.into_iter().map(|(id, m)| (id, m.replace("&#39;", "'"))).collect();
    assert_eq!(rows, expected, "13 fortunes, sorted by message, escaped");
    assert!(html.starts_with("<!DOCTYPE html><html lang=\"en\"><head><title>Fortunes</title></head><body><table>"));

    for (query, n) in COUNTS {
        let target = if query.is_empty() { "/updates".to_owned() } else { format!("/updates?queries{query}") };
        let res = server.get(&target);
        assert_eq!(res.status, 200, "{target}: {}", res.text());
        assert_eq!(worlds(&res.json()).len(), n, "{target}");
    }
    let updated = worlds(&server.get("/updates?queries=20").json());
    let ids: Vec<i32> = updated.iter().map(|w| w.id).collect();
    let stored = read_back(database, ids);
    assert_eq!(stored, updated, "/updates persisted what it answered");

    for mode in ["async", "blocking"] {
        for every in [1, 2, 3] {
            for _ in 0..4 {
                let res = server.get(&format!("/mix/{mode}?every={every}"));
                assert_eq!(res.status, 200, "{mode}: {}", res.text());
                let rows = worlds(&res.json()).len();
                if every == 1 {
                    assert_eq!(rows, 2, "every request runs the long query");
                } else {
                    assert!(rows == 1 || rows == 2);
                }
            }
        }
        assert_eq!(server.get(&format!("/mix/{mode}?every=nope")).status, 400);
        assert_eq!(server.get(&format!("/mix/{mode}")).status, 200);
    }
}

/// Reads rows straight from the database, outside the server, through `kiln::db`.
fn read_back(database: &str, ids: Vec<i32>) -> Vec<World> {
    let db = Database::open(database, Options { sqlite_readers: 1, ..Options::default() }).expect("open");
    on_worker(async {
        let db = db.worker();
        let mut rows = Vec::new();
        for id in ids {
            rows.push(
                db.query_one("SELECT id, randomnumber FROM world WHERE id = $1", &[&id]).await.expect("read back"),
            );
        }
        rows
    })
}

#[test]
fn sqlite_endpoints() {
    let dir = TempDir::new("endpoints");
    let url = dir.sqlite_url();
    let server = start(&url);
    check_endpoints(&server, &url);
}

#[test]
fn postgres_endpoints() {
    let Some(url) = pg_url("db_endpoints::postgres_endpoints") else { return };
    let server = start(&url);
    check_endpoints(&server, &url);
}

#[test]
fn bad_database_url_fails_at_start_up() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln-demo"))
        .args(["--listen", "127.0.0.1:0", "--database", "mysql://nope"])
        .output()
        .expect("run kiln-demo");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown database URL"));
}
