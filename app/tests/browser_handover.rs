//! A `SIGUSR2` hand-over under an open live page, in a real browser (headless Chromium
//! over WebDriver): the demo hands its listeners to a new process of itself (same
//! arguments, so the same `--secret-key`) and drains, closing the page's socket; the
//! page reconnects to the new process without a reload, which mounts the view afresh,
//! and the page is live after it (a comment posted by another client appears).
//!
//! Ignored by a plain `cargo test`, since it needs Chromium:
//! `KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-demo --test browser_handover -- --ignored`.

mod site_support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use kiln_test_support::{Browser, shots_dir};
use kiln_test_support::{TempDir, poll_until};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use site_support::{PUBLIC_URL, Visitor, password_hash};

/// A hang guard only: every wait ends as soon as the page shows what it waits for (a
/// hand-over of a debug build takes a few seconds).
const WAIT: Duration = Duration::from_secs(60);

/// The key both processes sign with: the old one's tokens and cookies stay good.
const SECRET_KEY: &str = "a secret of the hand-over test, 32 bytes and more";

/// The demo and the process it hands over to, in a process group of their own, all
/// killed when dropped.
struct Demo {
    first: Child,
    addr: SocketAddr,
}

impl Demo {
    fn start(database: &str) -> Demo {
        let hash = password_hash();
        let mut first = Command::new(env!("CARGO_BIN_EXE_kiln-demo"))
            .args(["--listen", "127.0.0.1:0", "--workers", "1", "--database", database, "--public-url", PUBLIC_URL])
            .args(["--editor-password-hash", &hash, "--comments-per-minute", "1000", "--secret-key", SECRET_KEY])
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the demo");
        let mut lines = BufReader::new(first.stdout.take().expect("stdout")).lines();
        let addr = loop {
            let line = lines.next().expect("the demo says where it listens").expect("a line");
            if let Some(addr) = line.split("listening on http://").nth(1) {
                break addr.trim().parse().expect("an address");
            }
        };
        // Both processes write to the pipe: it is drained so that neither blocks.
        std::thread::spawn(move || lines.for_each(drop));
        Demo { first, addr }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.first.id() as i32), Signal::SIGKILL);
        let _ = self.first.wait();
    }
}

/// Waits until `script` (a function body) returns something other than `null`.
fn wait_for(browser: &Browser, what: &str, script: &str) -> serde_json::Value {
    let found = poll_until(WAIT, || Some(browser.execute(script)).filter(|v| !v.is_null()));
    found.unwrap_or_else(|| panic!("{what}: never happened"))
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn a_sigusr2_hand_over_keeps_an_open_live_page_live_without_a_reload() {
    let dir = TempDir::new("site-browser-handover");
    let mut demo = Demo::start(&dir.sqlite_url());
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{}/pages/comments", demo.addr));
    wait_for(&browser, "connected", "return document.querySelector('.kiln-connected') ? true : null;");
    // A reload would forget these; the observer counts the page's disconnections.
    browser.execute(
        "window.kilnTestMark = 'same page'; window.kilnDrops = 0; \
         const root = document.querySelector('[data-kiln-live]'); \
         new MutationObserver(() => { if (root.classList.contains('kiln-disconnected')) window.kilnDrops++; }) \
           .observe(root, { attributes: true, attributeFilter: ['class'] });",
    );

    kill(Pid::from_raw(demo.first.id() as i32), Signal::SIGUSR2).expect("SIGUSR2");
    // The old process exits once the new one serves and it has drained.
    let exited = poll_until(WAIT, || demo.first.try_wait().expect("the old process's status"));
    assert!(exited.is_some_and(|status| status.success()), "the old process ends well: {exited:?}");
    wait_for(
        &browser,
        "the page dropped and reconnected",
        "return window.kilnDrops > 0 && document.querySelector('.kiln-connected') ? true : null;",
    );
    assert_eq!(browser.execute("return window.kilnTestMark;"), "same page", "the page was reloaded");

    // Live on the new process: a comment posted by another client shows.
    let mut visitor = Visitor { addr: demo.addr, cookies: Default::default() };
    let token = visitor.token("/pages/comments");
    let fields = [("csrf_token", token.as_str()), ("author", "After the hand-over"), ("body", "Still live.")];
    assert_eq!(visitor.post("/pages/comments/comments", &fields).status, 303);
    let shown =
        "return document.querySelector('ol.comments').textContent.includes('After the hand-over') ? true : null;";
    wait_for(&browser, "the comment posted after the hand-over", shown);
    assert_eq!(browser.execute("return window.kilnTestMark;"), "same page", "the page was reloaded");
}
