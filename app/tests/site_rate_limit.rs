//! The demo's rate limits on a server of several workers: a client's comments and
//! login attempts are counted once for the process, however its connections spread
//! over the workers (each request here is a connection of its own, which the kernel
//! hands to any worker). Before, each worker counted its own, and four workers let
//! four times the limit through.

mod site_support;

use std::sync::Barrier;

use kiln_test_support::Reply;
use site_support::{Site, Visitor};

const WORKERS: &str = "4";
/// Visitors posting at once, all from 127.0.0.1.
const VISITORS: usize = 8;

/// Each visitor, on a thread of its own, opens `page` for its CSRF token, then all
/// post `fields` (with their token) to `target` together, twice each.
fn post_together(site: &Site, page: &str, target: &str, fields: &[(&str, &str)]) -> Vec<Reply> {
    let visitors: Vec<(Visitor, String)> = (0..VISITORS)
        .map(|_| {
            let mut visitor = site.visitor();
            let token = visitor.token(page);
            (visitor, token)
        })
        .collect();
    let barrier = Barrier::new(VISITORS);
    std::thread::scope(|s| {
        let threads: Vec<_> = visitors
            .into_iter()
            .map(|(mut visitor, token)| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut all = vec![("csrf_token", token.as_str())];
                    all.extend_from_slice(fields);
                    barrier.wait();
                    [visitor.post(target, &all), visitor.post(target, &all)]
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    })
}

/// The replies by status, and every refusal's `Retry-After` checked.
fn count(replies: &[Reply], admitted: u16) -> usize {
    for refused in replies.iter().filter(|r| r.status != admitted) {
        assert_eq!(refused.status, 429, "{}", refused.text());
        let wait: u64 = refused.header("Retry-After").and_then(|s| s.parse().ok()).expect("Retry-After");
        assert!((1..=60).contains(&wait), "{wait}");
    }
    replies.iter().filter(|r| r.status == admitted).count()
}

#[test]
fn the_comment_limit_holds_across_workers() {
    let site = Site::sqlite("rate-workers", &["--workers", WORKERS, "--comments-per-minute", "2"]);
    let replies =
        post_together(&site, "/pages/tour", "/pages/tour/comments", &[("author", "Bot"), ("body", "probe 7f3a")]);
    assert_eq!(replies.len(), 2 * VISITORS);
    assert_eq!(count(&replies, 303), 2, "two comments a minute from one address, on any worker");
    let refused = replies.iter().find(|r| r.status == 429).expect("a refusal");
    assert!(refused.text().contains("Too many comments"), "{}", refused.text());
    assert_eq!(site.visitor().get("/pages/tour").text().matches("probe 7f3a").count(), 2, "two stored");
}

#[test]
fn the_login_limit_holds_across_workers() {
    let site = Site::sqlite("rate-workers-login", &["--workers", WORKERS, "--logins-per-minute", "3"]);
    let replies = post_together(&site, "/login", "/login", &[("password", "guess")]);
    assert_eq!(count(&replies, 403), 3, "three guesses a minute from one address, on any worker");
    let refused = replies.iter().find(|r| r.status == 429).expect("a refusal");
    assert!(refused.text().contains("Too many login attempts"), "{}", refused.text());
    assert!(refused.text().contains("kiln wiki"), "a page of the site: {}", refused.text());
}
