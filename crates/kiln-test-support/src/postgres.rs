//! The PostgreSQL the tests run against: `KILN_PG_URL` from `scripts/pg`, or a
//! cluster of a test's own.

use std::path::PathBuf;
use std::process::Command;

/// `KILN_PG_URL`; without it, `None` after saying loudly on stderr that `test` was
/// skipped, except under CI (`CI` set), where a skipped PostgreSQL test is a failure.
pub fn pg_url(test: &str) -> Option<String> {
    match std::env::var("KILN_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{test}: KILN_PG_URL is not set under CI; scripts/test starts PostgreSQL and sets it")
        }
        _ => {
            eprintln!(
                "\n!!! SKIPPED {test}: KILN_PG_URL is not set, so this PostgreSQL test did NOT run.\n\
                 !!! Start a throwaway server with `eval \"$(scripts/pg start)\"` and run again.\n"
            );
            None
        }
    }
}

/// A PostgreSQL cluster of the test's own (`scripts/pg`), removed on drop.
#[derive(Debug)]
pub struct Cluster {
    /// Its data directory.
    pub dir: String,
    /// Its URL, with a password.
    pub url: String,
}

impl Cluster {
    fn script() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg")
    }

    /// Starts a new cluster.
    pub fn start() -> Cluster {
        let out = Command::new(Self::script()).arg("start").output().expect("run scripts/pg start");
        assert!(out.status.success(), "scripts/pg start failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).expect("utf-8");
        let var = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")).map(str::to_owned))
                .unwrap_or_else(|| panic!("no {name} in {text}"))
        };
        Cluster { dir: var("KILN_PG_DIR"), url: var("KILN_PG_URL") }
    }

    /// Runs `scripts/pg COMMAND DIR` (`stop`, `kill`, `restart`, ...).
    pub fn run(&self, command: &str) {
        let status = Command::new(Self::script()).args([command, &self.dir]).status().expect("run scripts/pg");
        assert!(status.success(), "scripts/pg {command} failed");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Self::script()).args(["stop", &self.dir]).status();
    }
}
