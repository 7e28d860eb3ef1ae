//! The demo site over a socket, against the real `kiln-demo` binary: every page and
//! form, and the bad inputs (missing and oversized fields, scripts in comments and
//! in pages' links, control characters, missing and wrong CSRF tokens, a wrong
//! password, forged, expired and logged-out sessions, unknown slugs, traversal in
//! asset paths), and the rate limits behind a proxy. On SQLite, and the same checks on
//! PostgreSQL when `KILN_PG_URL` is set (`scripts/pg`; under CI it must be).

mod site_support;

use std::time::Duration;

use kiln_test_support::{Reply, pg_url};
use site_support::{PASSWORD, PUBLIC_URL, Site, Visitor, csrf_token, form, set_cookies};

/// A form's fields, in order.
type Fields<'a> = &'a [(&'a str, &'a str)];

/// The seeded pages, newest first.
const SEEDED: [&str; 5] = ["welcome", "tour", "markdown", "comments", "editing"];

fn assert_site_page(res: &Reply, status: u16) {
    assert_eq!(res.status, status, "{}", res.text());
    assert_eq!(res.header("Content-Type"), Some("text/html; charset=utf-8"));
    let html = res.text();
    assert!(html.starts_with("<!DOCTYPE html><html lang=\"en\">"), "{html}");
    assert!(html.contains("<a class=\"brand\" href=\"/\">kiln wiki</a>"), "in the site's layout: {html}");
    assert!(html.contains("rel=\"stylesheet\" href=\"/static/site."), "{html}");
}

// ---- Reading -------------------------------------------------------------------

fn home_lists_the_pages_newest_first(site: &Site) {
    let res = site.server.get("/");
    assert_site_page(&res, 200);
    let html = res.text();
    let positions: Vec<usize> = SEEDED
        .iter()
        .map(|slug| html.find(&format!("<a href=\"/pages/{slug}\">")).unwrap_or_else(|| panic!("{slug}: {html}")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "newest first: {positions:?}");
    assert!(html.contains("<time datetime=\"2026-01-10T09:00:00Z\">2026-01-10</time>"), "{html}");
    assert!(html.contains(r#"<link rel="alternate" type="application/rss+xml" title="kiln wiki" href="/feed.rss">"#));
}

fn paging_refuses_bad_numbers(site: &Site) {
    assert_site_page(&site.server.get("/?page=1"), 200);
    for bad in ["/?page=0", "/?page=x", "/?page=-1", "/?page=99999999999"] {
        assert_site_page(&site.server.get(bad), 400);
    }
    // The audit's `/?page=1&page=2` was page 2, silently.
    let twice = site.server.get("/?page=1&page=2");
    assert_site_page(&twice, 400);
    assert!(twice.text().contains("more than once"), "{}", twice.text());
    // Five pages fit on the first.
    assert_site_page(&site.server.get("/?page=2"), 404);
}

fn a_page_renders_markdown_comments_and_form(site: &Site) {
    let res = site.server.get("/pages/tour");
    assert_site_page(&res, 200);
    let html = res.text();
    assert!(html.contains("<title>A tour of kiln — kiln wiki</title>"), "{html}");
    assert!(html.contains("<h1>A tour of kiln</h1>"));
    assert!(html.contains("<table>") && html.contains("<th>Step</th>"), "the Markdown table");
    assert!(html.contains("<pre><code class=\"language-rust\">"), "the code blocks");
    assert!(html.contains("<a href=\"https://www.rfc-editor.org/rfc/rfc9110\">RFC 9110</a>"), "the links");
    assert!(html.contains("<h2>Comments (20)</h2>"), "{html}");
    assert_eq!(html.matches("<li id=\"c").count(), 20);
    assert!(html.contains("&lt;script&gt;alert('comments are text')&lt;/script&gt;"), "a comment is text");
    assert!(!html.contains("<script>"), "no script on the page");
    // A plain form without JavaScript; over the page's socket once it connects.
    assert!(
        html.contains(r#"<form class="comment" method="post" action="/pages/tour/comments" data-kiln-submit="Post""#)
    );
    assert!(html.contains("<div data-kiln-live=\"") && html.contains("data-kiln-token=\""), "a live view");
    let token = csrf_token(html);
    assert_eq!(token.len(), 64);
    let cookies = set_cookies(&res);
    let csrf = cookies.iter().find(|c| c.starts_with("kiln_csrf=")).expect("a CSRF cookie for a new visitor");
    assert!(csrf.contains("HttpOnly") && csrf.contains("SameSite=Lax"), "{csrf}");
}

fn an_unknown_slug_is_a_404_page(site: &Site) {
    for target in ["/pages/no-such-page", "/pages/%2e%2e", "/pages/tour/extra"] {
        let res = site.server.get(target);
        assert_site_page(&res, 404);
    }
}

fn feed_and_sitemap_have_absolute_links(site: &Site) {
    let feed = site.server.get("/feed.rss");
    assert_eq!(feed.status, 200);
    let types: Vec<&str> = feed.head.lines().filter(|l| l.to_ascii_lowercase().starts_with("content-type:")).collect();
    assert_eq!(types, ["Content-Type: application/rss+xml; charset=utf-8"], "exactly one Content-Type");
    let xml = feed.text();
    assert!(xml.starts_with(r#"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>"#), "{xml}");
    assert!(xml.contains(&format!("<link>{PUBLIC_URL}/pages/tour</link>")), "{xml}");
    assert!(xml.contains(&format!(r#"<guid isPermaLink="true">{PUBLIC_URL}/pages/welcome</guid>"#)));
    assert!(xml.contains("<pubDate>Fri, 9 Jan 2026 09:00:00 +0000</pubDate>"), "RFC 2822 dates: {xml}");
    assert!(!xml.contains("127.0.0.1"), "links never come from Host");
    assert_eq!(xml.matches("<item>").count(), xml.matches("</item>").count());

    let sitemap = site.server.get("/sitemap.xml");
    assert_eq!(sitemap.status, 200);
    assert_eq!(sitemap.header("Content-Type"), Some("application/xml; charset=utf-8"));
    let xml = sitemap.text();
    assert!(xml.contains(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#));
    for slug in SEEDED {
        assert!(xml.contains(&format!("<loc>{PUBLIC_URL}/pages/{slug}</loc>")), "{slug}: {xml}");
    }
}

fn errors_are_pages_of_the_site(site: &Site) {
    assert_site_page(&site.server.get("/no/such/thing"), 404);
    let mut v = site.visitor();
    let res = v.send("DELETE", "/pages/tour", &[], None);
    assert_site_page(&res, 405);
    // POST: a live page's events come by POST to its own path when a proxy blocks
    // WebSocket (the event stream's transport).
    assert_eq!(res.header("Allow"), Some("POST, GET, HEAD"));
    assert_site_page(&v.get("/pages/tour/comments"), 405);
}

/// No other site may frame the pages (the editor's forms could be clicked through an
/// invisible frame); the benchmark endpoints answer as their peers do.
fn pages_cannot_be_framed_and_benchmarks_are_untouched(site: &Site) {
    for path in ["/", "/pages/tour", "/login", "/no/such/thing"] {
        let res = site.server.get(path);
        assert_eq!(res.header("X-Frame-Options"), Some("DENY"), "{path}");
        assert_eq!(res.header("Content-Security-Policy"), Some("frame-ancestors 'none'"), "{path}");
        assert_eq!(res.header("X-Content-Type-Options"), Some("nosniff"), "{path}");
    }
    assert_eq!(site.server.get("/feed.rss").header("X-Content-Type-Options"), Some("nosniff"));
    for path in ["/pong", "/json", "/fortunes", "/static/hello.txt"] {
        let res = site.server.get(path);
        assert_eq!(res.status, 200, "{path}");
        assert_eq!((res.header("X-Content-Type-Options"), res.header("X-Frame-Options")), (None, None), "{path}");
    }
}

fn assets_are_hashed_immutable_and_contained(site: &Site) {
    let home = site.server.get("/");
    let html = home.text();
    let start = html.find("/static/site.").expect("stylesheet link");
    let link = &html[start..start + html[start..].find('"').expect("end")];
    let css = site.server.get(link);
    assert_eq!(css.status, 200, "{link}");
    assert_eq!(css.header("Content-Type"), Some("text/css; charset=utf-8"), "{link}");
    assert_eq!(css.header("Cache-Control"), Some("public, max-age=31536000, immutable"));
    assert!(css.text().contains("--accent"));
    assert_eq!(site.server.get("/static/site.00000000.css").status, 404, "a stale hash");
    for target in [
        "/static/../Cargo.toml",
        "/static/..%2FCargo.toml",
        "/static/%2e%2e/Cargo.toml",
        "/static/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/static//etc/passwd",
        "/static/%2Fetc%2Fpasswd",
        "/static/..%5c..%5cCargo.toml",
    ] {
        let res = site.server.get(target);
        assert!(matches!(res.status, 400 | 404), "{target}: {}", res.status);
        assert!(res.text().contains("kiln wiki"), "{target}: a page of the site: {}", res.text());
        assert!(!res.text().contains("[package]") && !res.text().contains("root:"), "{target}");
    }
}

// ---- Comments ------------------------------------------------------------------

fn a_comment_is_stored_and_303s_back(site: &Site) {
    let mut v = site.visitor();
    let token = v.token("/pages/comments");
    let res = v.post("/pages/comments/comments", &[("csrf_token", &token), ("author", "Ann"), ("body", "First!")]);
    assert_eq!(res.status, 303, "{}", res.text());
    let location = res.header("Location").expect("Location").to_owned();
    assert!(location.starts_with("/pages/comments#c"), "{location}");
    let page = v.get("/pages/comments");
    assert!(page.text().contains("<strong>Ann</strong>"), "{}", page.text());
    assert!(page.text().contains("<p class=\"text\">First!</p>"));
    assert!(page.text().contains("<h2>Comments (1)</h2>"));
}

fn a_script_in_a_comment_is_escaped(site: &Site) {
    let mut v = site.visitor();
    let token = v.token("/pages/markdown");
    let script = "<script>document.title='owned'</script><img src=x onerror=alert(1)>";
    let res =
        v.post("/pages/markdown/comments", &[("csrf_token", &token), ("author", "<b>Mallory</b>"), ("body", script)]);
    assert_eq!(res.status, 303, "{}", res.text());
    let html = v.get("/pages/markdown").text().to_owned();
    assert!(html.contains("&lt;script&gt;document.title='owned'&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("<strong>&lt;b&gt;Mallory&lt;/b&gt;</strong>"), "{html}");
    assert!(!html.contains("<script>") && !html.contains("<img"), "{html}");
}

fn bad_comments_come_back_with_the_message(site: &Site) {
    let mut v = site.visitor();
    let token = v.token("/pages/welcome");
    let long_name = "n".repeat(81);
    let long_text = "t".repeat(4001);
    let links = "see https://a.example, http://b.example, www.c.example and https://d.example";
    let cases: [(Fields<'_>, &str, &str); 9] = [
        (&[("body", "no name field")], "Please give your name.", "no name field"),
        (&[("author", "Ann")], "Please write a comment.", "value=\"Ann\""),
        (&[("author", "  "), ("body", "blank name")], "Please give your name.", "blank name"),
        (&[("author", "Ann"), ("body", " \n ")], "Please write a comment.", "value=\"Ann\""),
        (&[("author", &long_name), ("body", "hi")], "The name is too long", &long_name),
        (&[("author", "Ann"), ("body", &long_text)], "The comment is too long", &long_text),
        (&[("author", "Ann"), ("body", links)], "too many links", "d.example"),
        (&[("author", "A\0nn"), ("body", "a NUL in the name")], "The name contains control characters.", "a NUL"),
        (&[("author", "Ann"), ("body", "an \u{1b}[2J escape")], "The comment contains control characters.", "escape"),
    ];
    for (fields, message, kept) in cases {
        let mut all = vec![("csrf_token", token.as_str())];
        all.extend_from_slice(fields);
        let res = v.post("/pages/welcome/comments", &all);
        assert_site_page(&res, 422);
        let html = res.text();
        assert!(html.contains("<p class=\"error\" role=\"alert\">") && html.contains(message), "{message}: {html}");
        assert!(html.contains(kept), "what was typed comes back: {kept}");
    }
    // A body that is not a form at all is refused with its own status, in the form.
    let res = v.send(
        "POST",
        "/pages/welcome/comments",
        &[("Content-Type", "text/plain"), ("X-CSRF-Token", &token)],
        Some("author=Ann&body=hi"),
    );
    assert_site_page(&res, 415);
    // A form over the app's body limit (256 KiB) is refused with 413, in the form.
    let huge = "x".repeat(300 * 1024);
    let res = v.post("/pages/welcome/comments", &[("csrf_token", &token), ("author", "Ann"), ("body", &huge)]);
    assert_site_page(&res, 413);
    assert!(!v.get("/pages/welcome").text().contains("<h2>Comments (1)</h2>"), "nothing was stored");
}

fn posts_without_the_right_csrf_token_are_403(site: &Site) {
    let mut v = site.visitor();
    let token = v.token("/pages/tour");
    let posts: [(&str, Fields<'_>); 4] = [
        ("/pages/tour/comments", &[("author", "Eve"), ("body", "forged")]),
        ("/login", &[("password", site_support::PASSWORD)]),
        ("/logout", &[]),
        ("/editor/new", &[("slug", "x"), ("title", "x"), ("body", "x"), ("action", "save")]),
    ];
    for (target, fields) in posts {
        // No token at all.
        assert_site_page(&v.post(target, fields), 403);
        // A wrong token.
        let mut wrong = vec![("csrf_token", "0".repeat(64))];
        wrong.extend(fields.iter().map(|(k, val)| (*k, val.to_string())));
        let wrong: Vec<(&str, &str)> = wrong.iter().map(|(k, val)| (*k, val.as_str())).collect();
        assert_site_page(&v.post(target, &wrong), 403);
        // The right token, but no CSRF cookie (another site's form).
        let mut stranger = Visitor { addr: site.server.addr, cookies: Default::default() };
        let mut with_token = vec![("csrf_token", token.as_str())];
        with_token.extend_from_slice(fields);
        assert_site_page(&stranger.post(target, &with_token), 403);
    }
    assert_eq!(v.get("/pages/tour").text().matches("<li id=\"c").count(), 20, "nothing was stored");
}

// ---- The editor ----------------------------------------------------------------

fn the_editor_creates_previews_and_edits_pages(site: &Site) {
    let mut v = site.visitor();
    let res = v.get("/editor");
    assert_eq!(res.status, 303, "no session: to the login form");
    assert_eq!(res.header("Location"), Some("/login"));
    v.log_in();
    let session = set_session_cookie_flags(&mut v);
    assert!(session.contains("HttpOnly") && session.contains("SameSite=Lax"), "{session}");

    let editor = v.get("/editor");
    assert_site_page(&editor, 200);
    assert!(editor.text().contains("<a href=\"/editor/pages/tour\">A tour of kiln</a>"));
    let token = csrf_token(editor.text());

    let body = "# Fresh\n\nA *new* page with a [link](https://example.org/).";
    let draft = [("csrf_token", token.as_str()), ("slug", "fresh"), ("title", "Fresh <page>"), ("body", body)];
    let mut preview = draft.to_vec();
    preview.push(("action", "preview"));
    let res = v.post("/editor/new", &preview);
    assert_site_page(&res, 200);
    assert!(res.text().contains("<div class=\"preview\" id=\"preview\"><h1>Fresh &lt;page&gt;</h1><h1>Fresh</h1>"));
    assert!(res.text().contains("<em>new</em>"));
    assert_site_page(&v.get("/pages/fresh"), 404);

    let mut save = draft.to_vec();
    save.push(("action", "save"));
    let res = v.post("/editor/new", &save);
    assert_eq!(res.status, 303, "{}", res.text());
    assert_eq!(res.header("Location"), Some("/pages/fresh"));
    let page = v.get("/pages/fresh");
    assert_site_page(&page, 200);
    assert!(page.text().contains("<h1>Fresh &lt;page&gt;</h1>") && page.text().contains("<em>new</em>"));
    assert!(v.get("/").text().contains("<a href=\"/pages/fresh\">"), "the newest page on the home page");

    let res = v.post("/editor/new", &save);
    assert_site_page(&res, 409);
    assert!(res.text().contains("There is already a page at /pages/fresh"));

    let edit = v.get("/editor/pages/fresh");
    assert_site_page(&edit, 200);
    assert!(edit.text().contains("value=\"Fresh &lt;page&gt;\""), "{}", edit.text());
    assert!(edit.text().contains(r#"<input id="title" name="title" required maxlength="200""#), "{}", edit.text());
    let changed = [("csrf_token", token.as_str()), ("title", "Fresh again"), ("body", "Changed *text*.")];
    let mut preview = changed.to_vec();
    preview.push(("action", "preview"));
    let res = v.post("/editor/pages/fresh", &preview);
    assert_site_page(&res, 200);
    assert!(res.text().contains("<em>text</em>"));
    assert!(v.get("/pages/fresh").text().contains("<em>new</em>"), "a preview saves nothing");
    let mut save = changed.to_vec();
    save.push(("action", "save"));
    let res = v.post("/editor/pages/fresh", &save);
    assert_eq!(res.status, 303, "{}", res.text());
    let page = v.get("/pages/fresh").text().to_owned();
    assert!(page.contains("<h1>Fresh again</h1>") && page.contains("<p>Changed <em>text</em>.</p>"), "{page}");

    assert_site_page(&v.get("/editor/pages/no-such-page"), 404);

    let token = v.token("/editor");
    let res = v.post("/logout", &[("csrf_token", &token)]);
    assert_eq!(res.status, 303);
    assert!(!v.cookies.contains_key("kiln_session"), "the session cookie is removed");
    assert_eq!(v.get("/editor").status, 303);
}

/// The attributes of the session cookie the last login set, by logging in again.
fn set_session_cookie_flags(v: &mut Visitor) -> String {
    let token = v.token("/login");
    let res = v.post("/login", &[("csrf_token", &token), ("password", site_support::PASSWORD)]);
    set_cookies(&res).into_iter().find(|c| c.starts_with("kiln_session=")).expect("a session cookie")
}

fn bad_pages_come_back_with_the_message(site: &Site) {
    let mut v = site.visitor();
    v.log_in();
    let token = v.token("/editor/new");
    let cases: [(&str, &str, &str, &str); 7] = [
        ("", "T", "B", "The address must be"),
        ("Bad Slug", "T", "B", "The address must be"),
        ("-dash", "T", "B", "The address must be"),
        ("ok", "", "B", "Please give the page a title."),
        ("ok", "T", "", "Please write the page."),
        ("ok", "T\0itle", "B", "The title contains control characters."),
        ("ok", "T", "B\u{7}ody", "The page contains control characters."),
    ];
    for (slug, title, body, message) in cases {
        let fields =
            [("csrf_token", token.as_str()), ("slug", slug), ("title", title), ("body", body), ("action", "save")];
        let res = v.post("/editor/new", &fields);
        assert_site_page(&res, 422);
        assert!(res.text().contains(message), "{message}: {}", res.text());
    }
    let long = "x".repeat(100_001);
    let fields =
        [("csrf_token", token.as_str()), ("slug", "long"), ("title", "T"), ("body", &long), ("action", "save")];
    assert_site_page(&v.post("/editor/new", &fields), 422);
    assert_site_page(&v.get("/pages/ok"), 404);
}

fn a_wrong_password_is_refused(site: &Site) {
    let mut v = site.visitor();
    let token = v.token("/login");
    for password in ["", "wrong", "correct horse battery stapl"] {
        let res = v.post("/login", &[("csrf_token", &token), ("password", password)]);
        assert_site_page(&res, 403);
        assert!(res.text().contains("Wrong password."));
        assert!(!v.cookies.contains_key("kiln_session"));
    }
    let res = v.post("/login", &[("csrf_token", &token)]);
    assert_site_page(&res, 403);
}

fn a_forged_session_is_no_session(site: &Site) {
    let mut v = site.visitor();
    let token = v.token("/login");
    let forged = [format!("9999999999:editor.{}", "0".repeat(64)), "9999999999:editor".to_owned(), "editor".to_owned()];
    for cookie in forged {
        v.cookies.insert("kiln_session".into(), cookie.clone());
        let res = v.get("/editor");
        assert_eq!(res.status, 303, "{cookie}");
        assert_eq!(res.header("Location"), Some("/login"));
        let fields =
            [("csrf_token", token.as_str()), ("slug", "forged"), ("title", "x"), ("body", "x"), ("action", "save")];
        assert_site_page(&v.post("/editor/new", &fields), 403);
    }
    // A real session cookie with its expiry pushed back: the signature no longer fits.
    v.cookies.remove("kiln_session");
    v.log_in();
    let real = v.cookies["kiln_session"].clone();
    let (expiry, rest) = real.split_once(':').expect("expiry:user.signature");
    let later: u64 = expiry.parse::<u64>().expect("expiry") + 1_000_000;
    v.cookies.insert("kiln_session".into(), format!("{later}:{rest}"));
    assert_eq!(v.get("/editor").status, 303, "a changed expiry is a forgery");
    assert_site_page(&v.get("/pages/forged"), 404);
}

fn a_login_that_is_not_a_form_says_so(site: &Site) {
    let mut v = site.visitor();
    let token = v.token("/login");
    // The audit's text/plain login was "403 Wrong password.", with the right password.
    let res = v.send(
        "POST",
        "/login",
        &[("Content-Type", "text/plain"), ("X-CSRF-Token", &token)],
        Some(&format!("password={PASSWORD}")),
    );
    assert_site_page(&res, 415);
    assert!(res.text().contains("expected `Content-Type: application/x-www-form-urlencoded`"), "{}", res.text());
    assert!(!res.text().contains("Wrong password."), "{}", res.text());
    assert!(res.text().contains(r#"<form method="post" action="/login">"#), "the form, to try again");
    assert!(!v.cookies.contains_key("kiln_session"));
}

fn previewing_a_missing_page_is_a_404(site: &Site) {
    let mut v = site.visitor();
    v.log_in();
    let token = v.token("/editor");
    // The audit's preview of /editor/pages/nope was a 200 edit form whose Save was a 404.
    for action in ["preview", "save"] {
        let fields = [("csrf_token", token.as_str()), ("title", "T"), ("body", "B"), ("action", action)];
        assert_site_page(&v.post("/editor/pages/no-such-page", &fields), 404);
    }
    let fields = [("csrf_token", token.as_str()), ("title", ""), ("body", "B"), ("action", "preview")];
    assert_site_page(&v.post("/editor/pages/no-such-page", &fields), 404);
    assert_site_page(&v.get("/pages/no-such-page"), 404);
}

/// The audit's `[click](javascript:alert(3))` was a link that ran script, on the page
/// and in `/feed.rss`; `![i](javascript:...)` an image whose source did.
fn script_links_in_a_page_are_text_on_the_page_and_in_the_feed(site: &Site) {
    let mut v = site.visitor();
    v.log_in();
    let token = v.token("/editor/new");
    let body = "[click](javascript:alert(3)) [tab](java&#x09;script:alert(4)) \
                ![pic](JAVASCRIPT:alert(5)) [data](data:text/html,x) [ok](https://example.org/)";
    let fields = [
        ("csrf_token", token.as_str()),
        ("slug", "script-links"),
        ("title", "Links"),
        ("body", body),
        ("action", "save"),
    ];
    assert_eq!(v.post("/editor/new", &fields).status, 303);
    let page = v.get("/pages/script-links");
    assert_site_page(&page, 200);
    assert!(
        page.text().contains(r#"<p>click tab pic data <a href="https://example.org/">ok</a></p>"#),
        "{}",
        page.text()
    );
    let feed = v.get("/feed.rss");
    assert_eq!(feed.status, 200);
    let xml = feed.text();
    assert!(xml.contains("<title>Links</title>") && xml.contains("click tab pic data"), "{xml}");
    for text in [page.text(), xml] {
        assert!(!text.to_ascii_lowercase().contains("script:") && !text.contains("data:"), "{text}");
    }
}

/// The audit: `lastBuildDate` was the newest page's `updated`, so an edit of an older
/// page did not move it. Run before any page is created: the newest is then a seeded
/// page of January 2026, older than any edit.
fn the_feed_is_as_new_as_the_last_edit(site: &Site) {
    let mut v = site.visitor();
    v.log_in();
    let token = v.token("/editor");
    let fields =
        [("csrf_token", token.as_str()), ("title", "Editing, edited"), ("body", "Edited."), ("action", "save")];
    assert_eq!(v.post("/editor/pages/editing", &fields).status, 303, "the oldest page edited");
    let editor = v.get("/editor");
    let listed = editor.text();
    let entry = &listed[listed.find(r#"<a href="/editor/pages/editing">"#).expect("the edited page listed")..];
    let edited = between(entry, r#"<time datetime=""#, "\"");
    let feed = v.get("/feed.rss");
    let built = between(feed.text(), "<lastBuildDate>", "</lastBuildDate>");
    assert_eq!(rfc2822_as_iso(built), edited, "{}", feed.text());
}

/// The audit: a copy of the session cookie stayed the editor's after `POST /logout`
/// until it expired.
fn a_logout_ends_the_session_for_good(site: &Site) {
    let mut v = site.visitor();
    v.log_in();
    let copy = v.cookies["kiln_session"].clone();
    // A session's start is known to the millisecond, and one started in the millisecond
    // of the logout outlives it (so that a login again at once works): log out later.
    std::thread::sleep(Duration::from_millis(5));
    let token = v.token("/editor");
    assert_eq!(v.post("/logout", &[("csrf_token", &token)]).status, 303);

    let mut thief = site.visitor();
    let token = thief.token("/login");
    thief.cookies.insert("kiln_session".into(), copy);
    let res = thief.get("/editor");
    assert_eq!(res.status, 303, "the copied cookie is logged out: {}", res.text());
    assert_eq!(res.header("Location"), Some("/login"));
    assert_eq!(thief.get("/editor/pages/tour").status, 303);
    let fields =
        [("csrf_token", token.as_str()), ("slug", "stolen"), ("title", "x"), ("body", "x"), ("action", "save")];
    let res = thief.post("/editor/new", &fields);
    assert_site_page(&res, 403);
    assert!(res.text().contains("Your session has ended"), "{}", res.text());

    // Logging in again straight away works.
    v.log_in();
    assert_site_page(&v.get("/editor"), 200);
    // A logout posted without the editor's session ends no one's session.
    let mut stranger = site.visitor();
    let token = stranger.token("/login");
    assert_eq!(stranger.post("/logout", &[("csrf_token", &token)]).status, 303);
    assert_site_page(&v.get("/editor"), 200);
    assert_site_page(&v.get("/pages/stolen"), 404);
}

/// The text between the first `start` in `text` and the `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start} in {text}")) + start.len();
    &text[from..from + text[from..].find(end).unwrap_or_else(|| panic!("no {end} after {start}"))]
}

/// `Fri, 9 Jan 2026 09:00:00 +0000` as `2026-01-09T09:00:00Z`.
fn rfc2822_as_iso(date: &str) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let parts: Vec<&str> = date.split(' ').collect();
    let [_, day, month, year, time, "+0000"] = parts[..] else { panic!("not an RFC 2822 date in UTC: {date}") };
    let month = MONTHS.iter().position(|m| *m == month).unwrap_or_else(|| panic!("{date}")) + 1;
    let day: u32 = day.parse().unwrap_or_else(|_| panic!("{date}"));
    format!("{year}-{month:02}-{day:02}T{time}Z")
}

fn check_all(site: &Site) {
    home_lists_the_pages_newest_first(site);
    paging_refuses_bad_numbers(site);
    a_page_renders_markdown_comments_and_form(site);
    an_unknown_slug_is_a_404_page(site);
    feed_and_sitemap_have_absolute_links(site);
    the_feed_is_as_new_as_the_last_edit(site);
    errors_are_pages_of_the_site(site);
    pages_cannot_be_framed_and_benchmarks_are_untouched(site);
    assets_are_hashed_immutable_and_contained(site);
    posts_without_the_right_csrf_token_are_403(site);
    a_comment_is_stored_and_303s_back(site);
    a_script_in_a_comment_is_escaped(site);
    bad_comments_come_back_with_the_message(site);
    a_wrong_password_is_refused(site);
    a_login_that_is_not_a_form_says_so(site);
    a_forged_session_is_no_session(site);
    bad_pages_come_back_with_the_message(site);
    previewing_a_missing_page_is_a_404(site);
    the_editor_creates_previews_and_edits_pages(site);
    script_links_in_a_page_are_text_on_the_page_and_in_the_feed(site);
    a_logout_ends_the_session_for_good(site);
}

#[test]
fn sqlite_site() {
    check_all(&Site::sqlite("all", &[]));
}

#[test]
fn postgres_site() {
    let Some(base) = pg_url("site_http::postgres_site") else { return };
    check_all(&Site::postgres(&base, "all", &[]));
}

#[test]
fn comments_are_rate_limited_per_client() {
    let site = Site::sqlite("rate", &["--comments-per-minute", "2"]);
    let mut v = site.visitor();
    let token = v.token("/pages/tour");
    for n in 0..2 {
        let res = v.post("/pages/tour/comments", &[("csrf_token", &token), ("author", "Bot"), ("body", "spam")]);
        assert_eq!(res.status, 303, "comment {n}: {}", res.text());
    }
    let res = v.post("/pages/tour/comments", &[("csrf_token", &token), ("author", "Bot"), ("body", "spam")]);
    assert_site_page(&res, 429);
    assert!(res.text().contains("Too many comments"));
    assert_site_page(&v.get("/pages/tour"), 200);
}

/// The audit: five refused comments used up a quota of five, and the sixth, right,
/// comment was a 429 that lost what was typed.
#[test]
fn refused_comments_do_not_use_up_the_rate_limit() {
    let site = Site::sqlite("rate-refused", &["--comments-per-minute", "2"]);
    let mut v = site.visitor();
    let token = v.token("/pages/tour");
    for n in 0..5 {
        let res = v.post("/pages/tour/comments", &[("csrf_token", &token), ("body", "no name")]);
        assert_site_page(&res, 422);
        assert!(res.text().contains("Please give your name."), "refused comment {n}");
    }
    for n in 0..2 {
        let res = v.post("/pages/tour/comments", &[("csrf_token", &token), ("author", "Ann"), ("body", "right")]);
        assert_eq!(res.status, 303, "comment {n}: {}", res.text());
    }
    let res = v.post("/pages/tour/comments", &[("csrf_token", &token), ("author", "Ann"), ("body", "one too many")]);
    assert_site_page(&res, 429);
    assert!(res.text().contains("Too many comments"), "{}", res.text());
    assert!(res.text().contains("one too many") && res.text().contains(r#"value="Ann""#), "what was typed comes back");
}

/// A POST of `fields` as a form, said by a proxy to come from `client`.
fn post_from(v: &mut Visitor, target: &str, client: &str, fields: Fields<'_>) -> Reply {
    let headers = [("Content-Type", "application/x-www-form-urlencoded"), ("X-Forwarded-For", client)];
    v.send("POST", target, &headers, Some(&form(fields)))
}

/// The audit: behind `--trusted-proxy` every visitor shared the proxy's quota, so one
/// guesser locked the editor out of `/login`.
#[test]
fn rate_limits_count_the_forwarded_client_behind_a_trusted_proxy() {
    let args = ["--trusted-proxy", "127.0.0.1", "--logins-per-minute", "2", "--comments-per-minute", "1"];
    let site = Site::sqlite("rate-proxied", &args);
    let (mut guesser, mut editor) = (site.visitor(), site.visitor());
    let (guess, login) = (guesser.token("/login"), editor.token("/login"));
    for n in 0..2 {
        let res = post_from(&mut guesser, "/login", "203.0.113.66", &[("csrf_token", &guess), ("password", "guess")]);
        assert_site_page(&res, 403);
        assert!(res.text().contains("Wrong password."), "guess {n}");
    }
    let res = post_from(&mut guesser, "/login", "203.0.113.66", &[("csrf_token", &guess), ("password", "guess")]);
    assert_site_page(&res, 429);
    let res = post_from(&mut editor, "/login", "198.51.100.7", &[("csrf_token", &login), ("password", PASSWORD)]);
    assert_eq!(res.status, 303, "the editor has a quota of their own: {}", res.text());

    let comment = |token: &str| [("csrf_token", token.to_owned()), ("author", "Ann".into()), ("body", "hi".into())];
    let (mut ann, mut bob) = (site.visitor(), site.visitor());
    let (ann_token, bob_token) = (ann.token("/pages/tour"), bob.token("/pages/tour"));
    let fields = comment(&ann_token);
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(post_from(&mut ann, "/pages/tour/comments", "203.0.113.1", &fields).status, 303);
    assert_site_page(&post_from(&mut ann, "/pages/tour/comments", "203.0.113.1", &fields), 429);
    let fields = comment(&bob_token);
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(post_from(&mut bob, "/pages/tour/comments", "203.0.113.2", &fields).status, 303);
}

/// Without `--trusted-proxy`, `X-Forwarded-For` is anyone's to write: a client that
/// names a new address in each request still has one quota, its connection's.
#[test]
fn an_untrusted_peers_forwarded_for_is_ignored() {
    let site = Site::sqlite("rate-untrusted", &["--logins-per-minute", "2"]);
    let mut v = site.visitor();
    let token = v.token("/login");
    for client in ["203.0.113.1", "203.0.113.2"] {
        let res = post_from(&mut v, "/login", client, &[("csrf_token", &token), ("password", "guess")]);
        assert_site_page(&res, 403);
    }
    let res = post_from(&mut v, "/login", "203.0.113.3", &[("csrf_token", &token), ("password", "guess")]);
    assert_site_page(&res, 429);
}

#[test]
fn an_expired_session_is_no_session() {
    let site = Site::sqlite("expiry", &["--session-ttl", "1"]);
    let mut v = site.visitor();
    v.log_in();
    // The session lasts one second on the server's clock, counted in whole seconds:
    // two seconds later it has ended, however slow the machine.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let res = v.get("/editor");
    assert_eq!(res.status, 303, "{}", res.text());
    assert_eq!(res.header("Location"), Some("/login"));
}

#[test]
fn the_site_starts_seeded_once_and_keeps_what_was_written() {
    let dir = kiln_test_support::TempDir::new("site-restart");
    let args = ["--workers", "1", "--database", &dir.sqlite_url(), "--comments-per-minute", "100"];
    let hash = site_support::password_hash();
    let mut all = args.to_vec();
    all.extend(["--editor-password-hash", &hash]);
    {
        let server = kiln_test_support::Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &all);
        let mut v = Visitor { addr: server.addr, cookies: Default::default() };
        let token = v.token("/pages/tour");
        let res = v.post("/pages/tour/comments", &[("csrf_token", &token), ("author", "Kept"), ("body", "still here")]);
        assert_eq!(res.status, 303);
    }
    let server = kiln_test_support::Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &all);
    let html = server.get("/pages/tour").text().to_owned();
    assert!(html.contains("<h2>Comments (21)</h2>") && html.contains("still here"), "{html}");
    assert_eq!(server.get("/").text().matches("<li>").count(), 5, "seeded once");
}

#[test]
fn the_benchmark_endpoints_still_answer() {
    let site = Site::sqlite("bench", &[]);
    assert_eq!(site.server.get("/pong").text(), "PONG");
    assert_eq!(site.server.get("/plaintext").text(), "Hello, World!");
    assert_eq!(site.server.get("/json").text(), r#"{"message":"Hello, World!"}"#);
    assert_eq!(site.server.get("/db").status, 200);
    assert_eq!(site.server.get("/static/hello.txt").status, 200);
}

#[test]
fn a_database_outage_is_a_503_page_of_the_site() {
    if pg_url("site_http::a_database_outage_is_a_503_page_of_the_site").is_none() {
        return;
    }
    let cluster = kiln_test_support::Cluster::start();
    let site = Site::postgres(&cluster.url, "outage", &["--query-timeout-ms", "2000"]);
    assert_site_page(&site.server.get("/pages/tour"), 200);
    cluster.run("halt");
    let down = kiln_test_support::poll_until(std::time::Duration::from_secs(30), || {
        let res = site.server.get("/pages/tour");
        (res.status != 200).then_some(res)
    })
    .expect("an error page once PostgreSQL is down");
    assert_site_page(&down, 503);
    assert_eq!(down.header("Retry-After"), Some("1"));
    assert!(down.text().contains("cannot reach its database"), "{}", down.text());
    assert_site_page(&site.server.get("/"), 503);
    cluster.run("resume");
    let back = kiln_test_support::poll_until(std::time::Duration::from_secs(30), || {
        (site.server.get("/pages/tour").status == 200).then_some(())
    });
    assert!(back.is_some(), "the site recovers with its database");
}
