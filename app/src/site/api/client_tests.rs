//! Every operation of the JSON API round-tripped through kiln's typed Rust client
//! (`kiln::client`) against the site served on 127.0.0.1: the client's types are the
//! handlers' own.

use kiln::client::Client;
use kiln::http::Server;

use super::super::tests::{EDITOR_PASSWORD, app};
use super::comments::{comments, post_comment, post_comment_csrf, token};
use super::pages::{page, pages, search};
use super::routes::{ApiComments, ApiPage, ApiPages, ApiPostComment, ApiPostCommentCsrf, ApiSearch, ApiToken};
use super::types::{NamedComment, NewComment, TokenRequest};

#[test]
fn the_rust_client_round_trips_every_demo_operation() {
    let (app, _dir) = app("api-client");
    let serving = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).expect("serve");
    let anonymous = Client::new(format!("http://{}", serving.local_addr()));

    let list = anonymous.call(pages, &ApiPages { page: None }, ()).expect("pages");
    assert!(list.pages.iter().any(|p| p.slug == "tour"), "{list:?}");
    let tour = anonymous.call(page, &ApiPage { slug: "tour".into() }, ()).expect("page");
    assert_eq!(tour.slug, "tour");
    let missing = anonymous.call(page, &ApiPage { slug: "nowhere".into() }, ()).expect_err("no page");
    assert_eq!(missing.status(), Some(404));
    let problem: serde_json::Value = missing.body_json().expect("problem details");
    assert_eq!((problem["status"].as_u64(), problem["instance"].as_str()), (Some(404), Some("/api/pages/nowhere")));
    let found = anonymous.call(search, &ApiSearch { q: "tour".into() }, ()).expect("search");
    assert!(found.iter().any(|p| p.slug == "tour"), "{found:?}");

    let new = NewComment { body: "From Rust.".into() };
    let refused = anonymous.call(post_comment, &ApiPostComment { slug: "tour".into() }, new).expect_err("no token");
    assert_eq!(refused.status(), Some(401));

    let issued = anonymous
        .call(token, &ApiToken, TokenRequest { author: "Rust".into(), password: EDITOR_PASSWORD.into() })
        .expect("token");
    let author = Client::new(format!("http://{}", serving.local_addr())).bearer(&issued.token);
    let new = NewComment { body: "From Rust.".into() };
    let posted = author.call(post_comment, &ApiPostComment { slug: "tour".into() }, new).expect("post");
    assert_eq!((posted.author.as_str(), posted.body.as_str()), ("Rust", "From Rust."));
    let listed = anonymous.call(comments, &ApiComments { slug: "tour".into() }, ()).expect("comments");
    assert_eq!(listed.last().map(|c| c.id), Some(posted.id));

    // From the site's own page: its CSRF cookie, and the token the page holds.
    let page = kiln_test_support::get(serving.local_addr(), "/pages/tour").expect("the page");
    let cookie = page.header("set-cookie").and_then(|c| c.split(';').next()).expect("a CSRF cookie");
    let csrf = page.text().split("name=\"csrf_token\" value=\"").nth(1).and_then(|t| t.split('"').next());
    let from_page = Client::new(format!("http://{}", serving.local_addr()))
        .header("cookie", cookie)
        .header("x-csrf-token", csrf.expect("a CSRF token"));
    let named = NamedComment { author: "Page".into(), body: "From the page.".into() };
    let posted = from_page.call(post_comment_csrf, &ApiPostCommentCsrf { slug: "tour".into() }, named).expect("post");
    assert_eq!(posted.author, "Page");
    let forged = NamedComment { author: "Page".into(), body: "Forged.".into() };
    let refused = anonymous.call(post_comment_csrf, &ApiPostCommentCsrf { slug: "tour".into() }, forged);
    assert_eq!(refused.expect_err("no CSRF token").status(), Some(403));

    serving.shutdown();
    serving.wait().expect("the server stops");
}
