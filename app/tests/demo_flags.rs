//! kiln-demo refusing, at start, flags it would otherwise run broken with.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use kiln_test_support::{TempDir, poll_until};

/// Longest a refused start may take before the test fails rather than hangs (a server
/// that starts after all would run until killed).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs kiln-demo with `args` and returns how it ended, or kills it and fails when
/// it serves instead.
fn refused_start(dir: &TempDir, args: &[&str]) -> Output {
    refused_start_on(dir, "127.0.0.1:0", args)
}

/// [`refused_start`], listening on `listen`.
fn refused_start_on(dir: &TempDir, listen: &str, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln-demo"))
        .args(["--listen", listen, "--workers", "1", "--database", &dir.sqlite_url()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kiln-demo");
    let exited = poll_until(START_TIMEOUT, || child.try_wait().ok().flatten()).is_some();
    if !exited {
        let _ = child.kill();
    }
    let out = child.wait_with_output().expect("its output");
    assert!(exited, "kiln-demo {args:?} started: {}", String::from_utf8_lossy(&out.stdout));
    out
}

/// A kiln-demo that started serving; stopped when dropped (a failed test included).
struct Serving {
    child: std::process::Child,
    /// `127.0.0.1:PORT`, as it said it listens.
    addr: String,
}

impl Serving {
    /// Starts kiln-demo with `args` and waits for its "listening on" line; fails the
    /// test if it ends first.
    fn start(dir: &TempDir, args: &[&str]) -> Serving {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kiln-demo"))
            .args(["--listen", "127.0.0.1:0", "--workers", "1", "--database", &dir.sqlite_url()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn kiln-demo");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("its stdout"));
        let mut serving = Serving { child, addr: String::new() };
        let mut line = String::new();
        while !line.contains("listening on") {
            line.clear();
            assert!(std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0, "kiln-demo {args:?} ended");
        }
        serving.addr = line.trim().rsplit("http://").next().unwrap().to_owned();
        serving
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The audit: an access log in a folder that does not exist started anyway, only
/// saying on stderr that it was dropping lines.
#[test]
fn an_access_log_that_cannot_be_opened_refuses_to_start_naming_it() {
    let dir = TempDir::new("demo-flags-log");
    let log = dir.path().join("no-such-folder").join("access.log");
    let out = refused_start(&dir, &["--access-log", log.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("--access-log") && stderr.contains(log.to_str().unwrap()), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening"), "never served");
}

/// The audit: `--session-ttl 0` was taken, and every login ended as it started.
#[test]
fn a_session_ttl_of_zero_refuses_to_start() {
    let dir = TempDir::new("demo-flags-ttl");
    let out = refused_start(&dir, &["--session-ttl", "0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("--session-ttl") && stderr.contains("at least 1 second"), "{stderr}");
}

/// The audit: a `--public` folder that does not exist panicked at start.
#[test]
fn a_public_folder_that_cannot_be_read_refuses_to_start_without_a_panic() {
    let dir = TempDir::new("demo-flags-public");
    let public = dir.path().join("no-such-folder");
    let out = refused_start(&dir, &["--public", public.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("kiln-demo: --public: assets ") && stderr.contains(public.to_str().unwrap()), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A second kiln-demo on a port that one already serves is refused, instead of
/// sharing the port and answering every other request.
#[test]
fn a_second_demo_on_a_port_in_use_refuses_to_start() {
    let dir = TempDir::new("demo-flags-port");
    let first = Serving::start(&dir, &[]);
    let addr = first.addr.clone();
    let out = refused_start_on(&TempDir::new("demo-flags-port-2"), &addr, &[]);
    drop(first);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{addr} is already in use")), "{stderr}");
}

/// The audit: a `--public` folder from another version (its `site.css` changed) served
/// every page with a stylesheet link that was a 404, without a word.
#[test]
fn a_public_folder_whose_stylesheet_is_not_the_built_one_refuses_to_start() {
    let dir = TempDir::new("demo-flags-stale");
    let public = dir.path().join("public");
    std::fs::create_dir_all(&public).unwrap();
    let built = concat!(env!("CARGO_MANIFEST_DIR"), "/public/site.css");
    let mut css = std::fs::read(built).unwrap();
    css.extend_from_slice(b"\n/* another version */\n");
    std::fs::write(public.join("site.css"), css).unwrap();
    let out = refused_start(&dir, &["--public", public.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("links as /static/site.") && stderr.contains("serve the folder of the same version"),
        "{stderr}"
    );
    // The folder as built starts (the unchanged files the pages link, beside nothing else).
    std::fs::copy(built, public.join("site.css")).unwrap();
    let serving = Serving::start(&dir, &["--public", public.to_str().unwrap()]);
    assert!(serving.addr.starts_with("127.0.0.1:"), "{}", serving.addr);
}
