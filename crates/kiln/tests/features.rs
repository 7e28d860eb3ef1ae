//! Cargo features: a crate that takes kiln with `default-features = false` gets no
//! database code, no SQLite and no PostgreSQL driver in its dependency tree; and a
//! first app (kiln's defaults) compiles no codec, no C and one `syn` (issue 33 item 15).

use std::process::Command;

/// `cargo tree` of kiln with these feature flags, over normal and build edges: each
/// crate as its name and version.
fn tree(flags: &[&str]) -> Vec<(String, String)> {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--package", "kiln", "--edges", "normal,build", "--prefix", "none", "--format", "{p}"])
        .args(["--offline"])
        .args(flags)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .collect()
}

fn has(tree: &[(String, String)], krate: &str) -> bool {
    tree.iter().any(|(name, _)| name == krate)
}

const DATABASE_CRATES: [&str; 5] = ["kiln-db", "rusqlite", "libsqlite3-sys", "tokio-postgres", "postgres-protocol"];

#[test]
fn without_default_features_no_database_crate_is_in_the_tree() {
    let lean = tree(&["--no-default-features"]);
    assert!(has(&lean, "kiln-http"), "the tree was read: {lean:?}");
    for krate in DATABASE_CRATES {
        assert!(!has(&lean, krate), "{krate} is in kiln's tree without default features");
    }
    // Each backend brings its own driver only.
    let sqlite = tree(&["--features", "sqlite"]);
    assert!(has(&sqlite, "rusqlite") && !has(&sqlite, "tokio-postgres"), "{sqlite:?}");
    let postgres = tree(&["--features", "postgres"]);
    assert!(has(&postgres, "tokio-postgres") && !has(&postgres, "rusqlite"), "{postgres:?}");
}

/// What compiles a codec or C source: none of it in a first app's build.
const CODEC_CRATES: [&str; 9] =
    ["flate2", "zlib-rs", "libdeflater", "libdeflate-sys", "brotlic", "brotlic-sys", "zstd", "zstd-sys", "cc"];

#[test]
fn a_first_build_compiles_no_codec_no_sqlite_and_one_syn() {
    let first = tree(&[]);
    assert!(has(&first, "kiln-http"), "the tree was read: {first:?}");
    for krate in CODEC_CRATES.iter().chain(&DATABASE_CRATES) {
        assert!(!has(&first, krate), "{krate} is in a first app's build");
    }
    // kiln derives nothing with serde, and its macros use the syn serde's and tokio's do.
    assert!(!has(&first, "serde_derive"), "serde_derive is in a first app's build");
    let mut syns: Vec<&str> = first.iter().filter(|(name, _)| name == "syn").map(|(_, v)| v.as_str()).collect();
    syns.sort_unstable();
    syns.dedup();
    assert_eq!(syns.len(), 1, "syn is built in versions {syns:?}");
    // Each coding comes with its feature.
    for (feature, brings) in [
        ("gzip", &["flate2", "libdeflater"][..]),
        ("brotli", &["brotlic"]),
        ("zstd", &["zstd"]),
        ("ws-deflate", &["flate2"]),
        ("sqlite", &["libsqlite3-sys"]),
    ] {
        let with = tree(&["--features", feature]);
        for krate in brings {
            assert!(has(&with, krate), "feature {feature} does not bring {krate}");
        }
    }
}
