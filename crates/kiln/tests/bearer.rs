//! Bearer tokens for APIs: issued by a handler with the app's `Key`, checked by the
//! `BearerToken` extractor (401 with a `WWW-Authenticate` challenge otherwise); and the
//! key's `sign`/`verify`, public for the app's own signed values.

use std::time::Duration;

use kiln::test::TestClient;
use kiln::{App, AppService, BearerToken, Key, Route};

#[derive(Route)]
#[route(POST, "/api/token/{user}")]
struct IssueToken {
    user: String,
    ttl: Option<u64>,
}

#[derive(Route)]
#[route("/api/me")]
struct Me;

async fn issue(route: IssueToken, key: Key) -> String {
    BearerToken::issue(&key, &route.user, Duration::from_secs(route.ttl.unwrap_or(3600)))
}

async fn me(_: Me, token: BearerToken) -> String {
    format!("hello {}", token.subject())
}

fn client(secret: u8) -> TestClient<AppService<()>> {
    TestClient::new(App::new(|_| ()).secret_key(Key::new([secret; 32]).unwrap()).route(issue).route(me))
}

#[test]
fn a_token_the_app_issued_is_accepted() {
    let mut c = client(1);
    let token = c.request("POST", &IssueToken { user: "ada lovelace".into(), ttl: None }).send().text();
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let res = c.request("GET", &Me).header("Authorization", &format!("{scheme} {token}")).send();
        assert_eq!((res.status().as_u16(), res.text()), (200, "hello ada lovelace".to_owned()), "{scheme}");
    }
}

#[test]
fn no_token_is_401_with_a_bare_challenge() {
    let mut c = client(1);
    let res = c.get(&Me);
    assert_eq!(res.status(), 401);
    assert_eq!(res.header("www-authenticate"), Some("Bearer"));
    let basic = c.request("GET", &Me).header("Authorization", "Basic YWRhOnB3").send();
    assert_eq!((basic.status().as_u16(), basic.header("www-authenticate")), (401, Some("Bearer")));
}

#[test]
fn forged_expired_and_foreign_tokens_are_401_invalid_token() {
    let mut c = client(1);
    let token = c.request("POST", &IssueToken { user: "ada".into(), ttl: None }).send().text();
    let expired = c.request("POST", &IssueToken { user: "ada".into(), ttl: Some(0) }).send().text();
    let foreign = client(2).request("POST", &IssueToken { user: "ada".into(), ttl: None }).send().text();
    let tampered = token.replacen("616461", "657665", 1);
    for (what, bad) in [("expired", expired), ("foreign", foreign), ("tampered", tampered), ("junk", "x".into())] {
        let res = c.request("GET", &Me).header("Authorization", &format!("Bearer {bad}")).send();
        assert_eq!(res.status(), 401, "{what}");
        assert_eq!(res.header("www-authenticate"), Some(r#"Bearer error="invalid_token""#), "{what}");
    }
}

#[test]
fn an_app_without_a_key_is_refused_when_built() {
    let Err(err) = App::new(|_| ()).route(me).build() else { panic!("built without a key") };
    assert!(err.to_string().contains("BearerToken"), "{err}");
}

#[test]
fn the_keys_signatures_are_public_and_bound_to_their_context() {
    let key = Key::new([9u8; 32]).unwrap();
    let signed = key.sign("invite", "team-4:ada");
    assert_eq!(key.verify("invite", &signed), Some("team-4:ada"));
    assert_eq!(key.verify("reset", &signed), None);
    assert_eq!(Key::new([8u8; 32]).unwrap().verify("invite", &signed), None);
}
