//! Cargo features: a crate that takes kiln with `default-features = false` gets no
//! database code, no SQLite and no PostgreSQL driver in its dependency tree.

use std::process::Command;

/// `cargo tree` of kiln with these feature flags: one crate name per line.
fn tree(flags: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--package", "kiln", "--edges", "normal", "--prefix", "none", "--format", "{p}", "--offline"])
        .args(flags)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

const DATABASE_CRATES: [&str; 5] = ["kiln-db", "rusqlite", "libsqlite3-sys", "tokio-postgres", "postgres-protocol"];

#[test]
fn without_default_features_no_database_crate_is_in_the_tree() {
    let lean = tree(&["--no-default-features"]);
    assert!(lean.iter().any(|c| c == "kiln-http"), "the tree was read: {lean:?}");
    for krate in DATABASE_CRATES {
        assert!(!lean.iter().any(|c| c == krate), "{krate} is in kiln's tree without default features");
    }
    // The defaults bring SQLite, and only the `postgres` feature the PostgreSQL driver.
    let default = tree(&[]);
    assert!(default.iter().any(|c| c == "rusqlite"), "{default:?}");
    assert!(!default.iter().any(|c| c == "tokio-postgres"), "{default:?}");
    let postgres = tree(&["--no-default-features", "--features", "postgres"]);
    assert!(postgres.iter().any(|c| c == "tokio-postgres") && !postgres.iter().any(|c| c == "rusqlite"));
}
