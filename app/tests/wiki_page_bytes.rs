//! The wiki page the benchmarks measure, `/pages/tour`, byte for byte: the whole
//! response of the real `kiln-demo` on a freshly seeded SQLite file is compared with
//! the committed copy `wiki_page_bytes.http`, so that a change made for speed (a
//! Markdown writer of its own, headers added in one piece) cannot change the page.
//!
//! Masked, because they differ on every request and nothing else does: the `Date`
//! header's value, and the CSRF token (64 random hex digits, in the form and in the
//! `Set-Cookie` with its 64-digit signature, which signs it with a random key).
//! Everything else is fixed by the seed (times are the seed's, not the clock's),
//! the stylesheet's content hash included: a new stylesheet is a new page.
//!
//! After a change that is meant to change the page, write the new copy with
//! `KILN_BLESS=1 cargo test -p kiln-demo --test wiki_page_bytes` and review its diff.

mod site_support;

use kiln_test_support::request;
use site_support::Site;

/// The committed copy, masked as [`masked`] masks.
const COPY: &str = "tests/wiki_page_bytes.http";

#[test]
fn the_wiki_page_is_byte_for_byte_the_committed_copy() {
    let site = Site::sqlite("page-bytes", &[]);
    // As a benchmark client asks: no cookie, so a new CSRF token and cookie.
    let raw = format!("GET /pages/tour HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", site.server.addr);
    let res = request(site.server.addr, &raw).expect("GET /pages/tour");
    assert_eq!(res.status, 200, "{}", res.head);
    let got = masked(&format!("{}\r\n\r\n{}", res.head, res.text()));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(COPY);
    if std::env::var_os("KILN_BLESS").is_some() {
        std::fs::write(&path, &got).expect("write the copy");
        return;
    }
    let want = std::fs::read_to_string(&path).expect("the committed copy");
    if got != want {
        let line = got.lines().zip(want.lines()).position(|(g, w)| g != w).unwrap_or(0);
        panic!(
            "/pages/tour differs from {COPY} from line {}:\n got: {:?}\nwant: {:?}\n(a change meant to change the page: \
             KILN_BLESS=1 cargo test -p kiln-demo --test wiki_page_bytes)",
            line + 1,
            got.lines().nth(line).unwrap_or("<end>"),
            want.lines().nth(line).unwrap_or("<end>"),
        );
    }
}

/// `response` with the per-request parts replaced: the `Date` value, the live view's
/// token (its expiry and visitor), and every run of exactly 64 lowercase hex digits
/// (the CSRF token, and the cookie's signature).
fn masked(response: &str) -> String {
    let mut out = String::with_capacity(response.len());
    for line in response.split_inclusive('\n') {
        match line.strip_prefix("Date: ") {
            Some(_) => out.push_str("Date: <per request>\r\n"),
            None => out.push_str(line),
        }
    }
    mask_tokens(&mask_live_token(&out))
}

fn mask_live_token(text: &str) -> String {
    const ATTRIBUTE: &str = "data-kiln-token=\"";
    match text.split_once(ATTRIBUTE).and_then(|(before, rest)| Some((before, rest.split_once('"')?.1))) {
        Some((before, after)) => format!("{before}{ATTRIBUTE}<per request>\"{after}"),
        None => text.to_owned(),
    }
}

fn mask_tokens(text: &str) -> String {
    let is_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|&&b| is_hex(b)).count();
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if run == 64 && starts_word && bytes.get(i + 64).is_none_or(|b| !b.is_ascii_alphanumeric()) {
            out.push_str("<64 hex digits>");
            i += 64;
        } else {
            let next = i + run.max(1);
            // Hex digits are ASCII; any other character is copied whole.
            let end = (next..=text.len()).find(|&e| text.is_char_boundary(e)).unwrap_or(text.len());
            out.push_str(&text[i..end]);
            i = end;
        }
    }
    out
}

#[test]
fn the_mask_hides_only_tokens_and_the_date() {
    let token = "0123456789abcdef".repeat(4);
    let text = format!(
        "Date: Wed, 25 Nov 2026 15:00:00 GMT\r\nx: kiln_csrf={token}.{token}; é{token}1 {token}\r\n\
         <div data-kiln-token=\"1764300000.0123.4567.89ab.{token}\">"
    );
    assert_eq!(
        masked(&text),
        format!(
            "Date: <per request>\r\nx: kiln_csrf=<64 hex digits>.<64 hex digits>; é{token}1 <64 hex digits>\r\n\
             <div data-kiln-token=\"<per request>\">"
        )
    );
}
