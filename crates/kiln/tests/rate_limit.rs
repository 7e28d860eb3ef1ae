//! `RateLimit` through the public API: one exact count for every worker of a server
//! hit from several threads at once, budgets per key (the app's own, the client
//! address through trusted proxies, the bearer subject), a table that stays its size
//! under a flood of keys, the budget coming back as time passes (a clock the test
//! moves), and the `429` rendered with `Retry-After` as the app renders its refusals.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use kiln::http::Server;
use kiln::rejection::Rejection;
use kiln::test::TestClient;
use kiln::{App, BearerToken, Key, Method, RateLimit, Response, Route, State};
use kiln_test_support::Streaming;

#[derive(Route)]
#[route("/worker")]
struct Which;

#[derive(Route)]
#[route(POST, "/comments")]
struct PostComment;

#[derive(Route)]
#[route("/pages/{slug}")]
struct ShowPage {
    slug: String,
}

#[derive(Route)]
#[route(POST, "/api/items")]
struct AddItem;

async fn which(_: Which, State(worker): State<usize>) -> String {
    format!("{worker}\n")
}

async fn post_comment(_: PostComment) -> &'static str {
    "stored\n"
}

async fn show_page(page: ShowPage) -> String {
    format!("{}\n", page.slug)
}

async fn add_item(_: AddItem) -> &'static str {
    "added\n"
}

/// A clock that stands still until the test moves it.
#[derive(Clone, Default)]
struct TestClock(Arc<AtomicU64>);

impl TestClock {
    fn advance(&self, by: Duration) {
        self.0.fetch_add(u64::try_from(by.as_nanos()).unwrap(), Ordering::Relaxed);
    }

    fn reader(&self) -> impl Fn() -> Duration + Send + Sync + 'static {
        let nanos = Arc::clone(&self.0);
        move || Duration::from_nanos(nanos.load(Ordering::Relaxed))
    }
}

/// One keep-alive connection's next response: its status line and headers, and its
/// one-line body.
fn next_response(conn: &mut Streaming) -> (String, String) {
    (conn.read_until("\r\n\r\n"), conn.read_until("\n"))
}

fn status(head: &str) -> u16 {
    head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status: {head}"))
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
}

#[test]
fn every_worker_busy_admits_exactly_the_burst() {
    const WORKERS: usize = 4;
    const PER_CONNECTION: usize = 2;
    const BURST: u32 = 20;
    const POSTS: usize = 10;
    // The clock stands still, so the count cannot depend on how fast the machine is:
    // no budget comes back while the test runs.
    let limit = RateLimit::per_hour(BURST).clock(TestClock::default().reader()).route::<PostComment>();
    let app = App::new(|worker| worker).route(which).route(post_comment).rate_limit(limit);
    let serving = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(WORKERS)).unwrap();
    let addr = serving.local_addr();

    // Connections until every worker holds `PER_CONNECTION` of them (the kernel spreads
    // connections over the workers' listeners by their ports).
    let mut by_worker: HashMap<usize, Vec<Streaming>> = HashMap::new();
    for _ in 0..500 {
        if by_worker.len() == WORKERS && by_worker.values().all(|c| c.len() >= PER_CONNECTION) {
            break;
        }
        let mut conn = Streaming::open(addr, "GET /worker HTTP/1.1\r\nHost: x\r\n\r\n");
        let (head, body) = next_response(&mut conn);
        assert_eq!(status(&head), 200, "{head}");
        let held = by_worker.entry(body.trim().parse().unwrap()).or_default();
        if held.len() < PER_CONNECTION {
            held.push(conn);
        }
    }
    assert!(by_worker.values().all(|c| c.len() >= PER_CONNECTION), "a connection on each worker");
    let connections: Vec<Streaming> = by_worker.into_values().flatten().collect();

    // Every connection pipelines its posts at once, on every worker together.
    let barrier = Barrier::new(connections.len());
    let answers: Vec<(String, String)> = std::thread::scope(|s| {
        let threads: Vec<_> = connections
            .into_iter()
            .map(|mut conn| {
                let barrier = &barrier;
                s.spawn(move || {
                    let posts = "POST /comments HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".repeat(POSTS);
                    barrier.wait();
                    conn.socket().write_all(posts.as_bytes()).unwrap();
                    (0..POSTS).map(|_| next_response(&mut conn)).collect::<Vec<_>>()
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });

    assert_eq!(answers.len(), WORKERS * PER_CONNECTION * POSTS);
    let admitted = answers.iter().filter(|(head, _)| status(head) == 200).count();
    assert_eq!(admitted, BURST as usize, "one budget for the whole server, not one per worker");
    for (head, body) in answers.iter().filter(|(head, _)| status(head) != 200) {
        assert_eq!(status(head), 429, "{head}");
        // 20 an hour: one every 180 s.
        assert_eq!(header(head, "retry-after"), Some("180"), "{head}");
        assert_eq!(body, "too many requests: try again in 180 seconds\n");
    }
    serving.shutdown();
    serving.wait().unwrap();
}

#[test]
fn keys_computed_by_the_app_each_get_their_own_budget() {
    let limit = RateLimit::per_minute(2).key_by(|req| req.header_str("x-tenant").map(str::to_owned));
    let mut client = TestClient::new(App::new(|_| ()).route(post_comment).rate_limit(limit));
    let mut post = |tenant: Option<&str>| {
        let req = client.request("POST", &PostComment);
        match tenant {
            Some(tenant) => req.header("X-Tenant", tenant).send().status(),
            None => req.send().status(),
        }
    };
    assert_eq!([post(Some("acme")), post(Some("acme")), post(Some("acme"))], [200, 200, 429]);
    assert_eq!([post(Some("globex")), post(Some("globex")), post(Some("globex"))], [200, 200, 429]);
    assert!((0..10).all(|_| post(None) == 200), "a request without a key is not limited");
}

#[test]
fn the_client_address_is_the_one_a_trusted_proxy_names() {
    let forwarded = |trusted: bool| {
        let app = App::new(|_| ()).route(post_comment).rate_limit(RateLimit::per_minute(1));
        let app = if trusted { app.trusted_proxies("127.0.0.1".parse().unwrap()) } else { app };
        let mut client = TestClient::new(app);
        ["203.0.113.1", "203.0.113.2", "203.0.113.1", "2001:db8::1", "2001:db8::2"]
            .map(|client_ip| client.request("POST", &PostComment).header("X-Forwarded-For", client_ip).send().status())
    };
    // Behind the proxy: a budget per client, an IPv6 client's by its /64.
    assert_eq!(forwarded(true), [200, 200, 429, 200, 429]);
    // From anyone else the header is the client's own writing: one budget, the peer's.
    assert_eq!(forwarded(false), [200, 429, 429, 429, 429]);
}

#[test]
fn a_bearer_subject_has_its_own_budget_and_a_forged_token_its_addresss() {
    let key = Key::generate();
    let limit = RateLimit::per_minute(1).key_by_bearer_subject();
    let app = App::new(|_| ()).secret_key(key.clone()).route(add_item).rate_limit(limit);
    let mut client = TestClient::new(app);
    let mut add = |token: &str| {
        client.request("POST", &AddItem).header("Authorization", &format!("Bearer {token}")).send().status()
    };
    let (ada, grace) = (
        BearerToken::issue(&key, "ada", Duration::from_secs(60)),
        BearerToken::issue(&key, "grace", Duration::from_secs(60)),
    );
    assert_eq!([add(&ada), add(&ada), add(&grace)], [200, 429, 200]);
    let forged = BearerToken::issue(&Key::generate(), "ada", Duration::from_secs(60));
    assert_eq!([add(&forged), add("made-up"), add(&ada)], [200, 429, 429], "forged tokens share the address's budget");
}

#[test]
fn keying_by_bearer_subject_needs_the_secret_key() {
    let app = App::new(|_| ()).route(add_item).rate_limit(RateLimit::per_minute(1).key_by_bearer_subject());
    let err = app.build().unwrap_err().to_string();
    assert!(err.contains("a rate limit") && err.contains("App::secret_key"), "{err}");
}

#[test]
fn a_limit_covers_only_its_prefix_methods_and_routes() {
    let app = App::new(|_| ())
        .route(post_comment)
        .route(show_page)
        .route(add_item)
        .rate_limit(RateLimit::per_minute(1).path_prefix("/api/").methods([Method::POST]))
        .rate_limit(RateLimit::per_minute(1).route::<ShowPage>());
    let mut client = TestClient::new(app);
    let page = ShowPage { slug: "tour".into() };
    assert_eq!([client.get(&page).status(), client.get(&page).status()], [200, 429]);
    let head = client.request("HEAD", &page).send().status();
    assert_eq!(head, 429, "a HEAD counts against its GET route");
    assert!((0..5).all(|_| client.request("POST", &PostComment).send().status() == 200), "outside both");
    let add = |client: &mut TestClient<_>| client.request("POST", &AddItem).send().status();
    assert_eq!([add(&mut client), add(&mut client)], [200, 429]);
    // Every pattern under the prefix is covered, a 404 too.
    assert_eq!(client.request("POST", "/api/nothing").send().status(), 429);
    assert_eq!(client.request("GET", "/api/nothing").send().status(), 404, "GET is not covered");
}

#[test]
fn a_flood_of_distinct_keys_keeps_the_table_its_size_and_an_active_key_limited() {
    let clock = TestClock::default();
    let limit = RateLimit::per_minute(3)
        .capacity(4096)
        .clock(clock.reader())
        .key_by(|req| req.header_str("x-key").map(str::to_owned));
    let mut client = TestClient::new(App::new(|_| ()).route(post_comment).rate_limit(limit.clone()));
    let mut post = |key: &str| client.request("POST", &PostComment).header("X-Key", key).send().status();
    assert_eq!([post("victim"), post("victim"), post("victim"), post("victim")], [200, 200, 200, 429]);

    for n in 0..100_000 {
        post(&format!("flood-{n}"));
    }
    assert_eq!(limit.cells(), 4096, "the table is the size it was made");
    assert_eq!(post("victim"), 429, "the flood gave the active key no budget back");

    // The flood is over: once a burst's worth of time has passed, every budget is back.
    clock.advance(Duration::from_secs(60));
    assert_eq!([post("victim"), post("newcomer"), post("flood-7")], [200, 200, 200]);
}

#[test]
fn the_budget_comes_back_as_time_passes() {
    let clock = TestClock::default();
    // Seven a minute: one every 8.57 s, told as 9 (rounded up, so a client that waits
    // that long is admitted).
    let limit = RateLimit::per_minute(7).burst(2).clock(clock.reader());
    let mut client = TestClient::new(App::new(|_| ()).route(post_comment).rate_limit(limit));
    let mut post = || client.request("POST", &PostComment).send();
    assert_eq!([post().status(), post().status()], [200, 200]);
    let refused = post();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.header("retry-after"), Some("9"));
    clock.advance(Duration::from_secs(8));
    assert_eq!(post().header("retry-after"), Some("1"), "still waiting, for less");
    clock.advance(Duration::from_secs(1));
    assert_eq!(post().status(), 200, "one request's budget is back");
    assert_eq!(post().status(), 429, "and no more");
    clock.advance(Duration::from_secs(3600));
    assert_eq!(
        [post().status(), post().status(), post().status()],
        [200, 200, 429],
        "an idle hour saves up a burst, no more"
    );
}

#[test]
fn a_refusal_is_rendered_as_the_apps_other_rejections_with_retry_after() {
    fn as_json(rejection: &Rejection, res: &mut Response) {
        res.set_status(rejection.status());
        res.set_content_type("application/json");
        let retry = match rejection {
            Rejection::TooManyRequests(r) => r.retry_after().as_secs(),
            _ => 0,
        };
        let body = format!(r#"{{"error":"{rejection}","retry":{retry}}}"#);
        res.body_mut().extend_from_slice(body.as_bytes());
    }
    let limit = RateLimit::per_minute(1).message("slow down").clock(TestClock::default().reader());
    let mut client = TestClient::new(App::new(|_| ()).route(post_comment).rate_limit(limit).on_rejection(as_json));
    assert_eq!(client.request("POST", &PostComment).send().status(), 200);
    let refused = client.request("POST", &PostComment).send();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.header("content-type"), Some("application/json"));
    assert_eq!(refused.header("retry-after"), Some("60"), "added when the renderer does not set it");
    assert_eq!(refused.text(), r#"{"error":"slow down","retry":60}"#);
}
