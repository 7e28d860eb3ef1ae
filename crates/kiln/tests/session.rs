//! Signed cookies and sessions: what the app signed reads back; a forged, re-keyed or
//! expired cookie is no session.

use std::time::Duration;

use kiln::test::{TestClient, TestResponse};
use kiln::{App, AppService, Key, Redirect, Route, SESSION_COOKIE, Session, SessionCookies, SetCookie, SignedCookies};

#[derive(Route)]
#[route(POST, "/login/{user}")]
struct Login {
    user: String,
}

#[derive(Route)]
#[route(POST, "/logout")]
struct Logout;

#[derive(Route)]
#[route("/whoami")]
struct WhoAmI;

#[derive(Route)]
#[route("/remember/{value}")]
struct Remember {
    value: String,
}

#[derive(Route)]
#[route("/recall")]
struct Recall;

async fn login(route: Login, session: Session) -> (SessionCookies, Redirect) {
    (session.start(&route.user), Redirect::to(&WhoAmI))
}

async fn logout(_: Logout, session: Session) -> (SessionCookies, Redirect) {
    (session.end(), Redirect::to(&WhoAmI))
}

async fn whoami(_: WhoAmI, session: Session) -> String {
    session.user().unwrap_or("nobody").to_owned()
}

#[derive(Route)]
#[route("/since")]
struct Since;

/// When the session started, in milliseconds since the epoch, or "none".
async fn since(_: Since, session: Session) -> String {
    let millis = session.started().map(|t| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis());
    millis.map_or("none".into(), |s| s.to_string())
}

async fn remember(route: Remember, cookies: SignedCookies) -> (SetCookie, &'static str) {
    (cookies.set("note", &route.value), "noted")
}

async fn recall(_: Recall, cookies: SignedCookies) -> String {
    cookies.get("note").unwrap_or_else(|| "nothing".into())
}

#[derive(Route)]
#[route("/about")]
struct About;

async fn about(_: About) -> &'static str {
    "about"
}

fn key(byte: u8) -> Key {
    Key::new([byte; 32]).unwrap()
}

fn app(key: Key) -> App<()> {
    App::new(|_| ()).secret_key(key).route(login).route(logout).route(whoami).route(remember).route(recall).route(since)
}

fn client(key: Key) -> TestClient<AppService<()>> {
    TestClient::new(app(key))
}

/// `name=value` of the `Set-Cookie` for `name`.
fn cookie(res: &TestResponse, name: &str) -> String {
    let line = res.header_all("set-cookie").find(|c| c.starts_with(&format!("{name}="))).expect("cookie set");
    line.split(';').next().unwrap().to_owned()
}

fn whoami_with(client: &mut TestClient<AppService<()>>, cookie: &str) -> String {
    client.request("GET", &WhoAmI).header("Cookie", cookie).send().text()
}

#[test]
fn a_session_cookie_is_signed_http_only_and_lax() {
    let mut c = client(key(1));
    let res = c.request("POST", &Login { user: "ada lovelace".into() }).send();
    assert_eq!(res.status(), 303);
    let line = res.header_all("set-cookie").find(|c| c.starts_with("kiln_session=")).unwrap();
    assert!(line.contains("; Path=/") && line.contains("; HttpOnly") && line.contains("; SameSite=Lax"), "{line}");
    assert!(line.contains("; Max-Age=604800"), "{line}");
    assert!(!line.contains("Secure"), "{line}");
    assert!(res.header_all("set-cookie").any(|c| c.starts_with("kiln_csrf=")), "a new CSRF token with the session");
    assert_eq!(whoami_with(&mut c, &cookie(&res, SESSION_COOKIE)), "ada lovelace");
    assert_eq!(c.get(&WhoAmI).text(), "nobody");
}

#[test]
fn secure_cookies_when_asked() {
    let mut c = TestClient::new(app(key(1)).secure_cookies(true));
    let res = c.request("POST", &Login { user: "ada".into() }).send();
    assert!(res.header_all("set-cookie").all(|c| c.contains("; Secure")));
}

#[test]
fn a_forged_session_cookie_is_no_session() {
    let mut c = client(key(1));
    let res = c.request("POST", &Login { user: "ada".into() }).send();
    let real = cookie(&res, SESSION_COOKIE);
    let (value, signature) = real.rsplit_once('.').unwrap();
    let forgeries = [
        // Another user, the signature kept.
        format!("{}.{signature}", value.replace(":ada", ":admin")),
        // A later expiry, the signature kept.
        format!("kiln_session=99999999999:1:ada.{signature}"),
        // No signature, a made-up one, a truncated one.
        "kiln_session=99999999999:1:ada".to_owned(),
        format!("kiln_session=99999999999:1:ada.{}", "0".repeat(64)),
        real[..real.len() - 2].to_owned(),
    ];
    for forged in forgeries {
        assert_eq!(whoami_with(&mut c, &forged), "nobody", "{forged}");
    }
    // Signed with another key.
    assert_eq!(whoami_with(&mut client(key(2)), &real), "nobody");
    // A value signed for another cookie name is not a session.
    let noted = c.get(&Remember { value: "99999999999:1:ada".into() });
    let note = cookie(&noted, "note");
    assert_eq!(whoami_with(&mut c, &note.replacen("note=", "kiln_session=", 1)), "nobody");
}

#[test]
fn an_expired_session_cookie_is_no_session() {
    // A session of no time at all has expired once it is read; the browser would have
    // dropped it, a client that keeps it anyway gets nothing.
    let mut c = TestClient::new(app(key(1)).session_ttl(Duration::ZERO));
    let res = c.request("POST", &Login { user: "ada".into() }).send();
    assert_eq!(whoami_with(&mut c, &cookie(&res, SESSION_COOKIE)), "nobody");
    // The same cookie from an app whose sessions last is valid: only the time differs.
    let mut lasting = client(key(1));
    let res = lasting.request("POST", &Login { user: "ada".into() }).send();
    assert_eq!(whoami_with(&mut lasting, &cookie(&res, SESSION_COOKIE)), "ada");
}

#[test]
fn logout_removes_the_cookies() {
    let mut c = client(key(1));
    let res = c.request("POST", &Logout).send();
    let removals: Vec<_> = res.header_all("set-cookie").collect();
    assert_eq!(removals.len(), 2);
    assert!(removals.iter().all(|c| c.contains("Max-Age=0")), "{removals:?}");
}

#[test]
fn signed_cookies_read_back_and_refuse_changes() {
    let mut c = client(key(1));
    let res = c.get(&Remember { value: "a; b=c".into() });
    let note = cookie(&res, "note");
    let got = c.request("GET", &Recall).header("Cookie", &note).send().text();
    assert_eq!(got, "a; b=c");
    let changed = note.replacen("note=a", "note=x", 1);
    assert_ne!(changed, note);
    assert_eq!(c.request("GET", &Recall).header("Cookie", &changed).send().text(), "nothing");
}

#[test]
fn an_app_without_a_key_whose_handler_needs_one_is_refused_when_built() {
    // The audit: it started, then answered every such request `500`, telling the
    // client how the app was misconfigured.
    let err = App::new(|_| ()).route(about).route(whoami).build().map(drop).expect_err("refused");
    let message = err.to_string();
    assert!(message.starts_with("App::secret_key: "), "{message}");
    assert!(message.contains("WhoAmI asks for `Session`") && message.contains("`App::secret_key`"), "{message}");
    // Behind `Option` or `Result` it is still needed; so are the CSRF and signed cookies.
    async fn maybe(_: Since, session: Option<Session>) -> &'static str {
        if session.is_some() { "yes" } else { "no" }
    }
    async fn guarded(_: Logout, _: kiln::CsrfGuard) -> &'static str {
        "ok"
    }
    async fn fallback(_: SignedCookies) -> &'static str {
        "ok"
    }
    assert!(App::new(|_| ()).route(maybe).build().is_err());
    assert!(App::new(|_| ()).route(guarded).build().is_err());
    assert!(App::new(|_| ()).fallback(fallback).build().err().unwrap().to_string().contains("the fallback"));
    // Given the key, in any order, it builds; and an app that needs none needs none.
    assert!(App::new(|_| ()).route(whoami).secret_key(key(1)).build().is_ok());
    assert!(App::new(|_| ()).route(about).build().is_ok());
}

#[test]
fn short_keys_are_refused() {
    let err = Key::new("too short").unwrap_err();
    assert_eq!(err.to_string(), "a secret key needs at least 32 bytes; this one has 9");
}

#[test]
fn a_session_knows_when_it_started() {
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    let mut c = client(key(1));
    let before = now();
    let res = c.request("POST", &Login { user: "ada".into() }).send();
    let after = now();
    let started: u128 =
        c.request("GET", &Since).header("Cookie", &cookie(&res, SESSION_COOKIE)).send().text().parse().unwrap();
    assert!((before..=after).contains(&started), "{before} <= {started} <= {after}");
    assert_eq!(c.get(&Since).text(), "none");
}
