//! `App::compression` over static files: a file without a precompressed sibling is
//! compressed per request (as nginx's `gzip on` does), its strong `ETag` made weak and
//! its `Accept-Ranges` dropped; a sibling is sent as it is; ranges, `304`s and the
//! preconditions stay right for a client holding a compressed copy.

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use kiln::static_files::StaticDir;
use kiln::test::{TestClient, TestResponse};
use kiln::{App, AppService, Compression};

/// A page of text over the compression threshold.
fn page() -> String {
    (0..200).map(|i| format!("<p>paragraph {i} of a saved page</p>\n")).collect()
}

/// A fresh folder per test, removed at the end.
struct Root(PathBuf);

impl Root {
    fn new() -> Root {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("kiln-compress-static-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("page.html"), page()).unwrap();
        std::fs::write(dir.join("tiny.css"), "p { margin: 0 }").unwrap();
        std::fs::write(dir.join("pic.png"), page()).unwrap();
        std::fs::write(dir.join("app.js"), page()).unwrap();
        std::fs::write(dir.join("app.js.br"), "brotli-bytes").unwrap();
        Root(dir)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn client(root: &Root, dir: impl FnOnce(StaticDir) -> StaticDir) -> TestClient<AppService<()>> {
    let dir = dir(StaticDir::new(&root.0).unwrap());
    TestClient::new(App::new(|_| ()).static_dir_with("/s", dir).compression(Compression::new()))
}

fn get(c: &mut TestClient<AppService<()>>, path: &str, headers: &[(&str, &str)]) -> TestResponse {
    let mut req = c.request("GET", path);
    for (name, value) in headers {
        req = req.header(name, value);
    }
    req.send()
}

fn gunzip(bytes: &[u8]) -> String {
    let mut out = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut out).unwrap();
    out
}

fn unbrotli(bytes: &[u8]) -> String {
    let mut out = String::new();
    brotlic::DecompressorReader::new(bytes).read_to_string(&mut out).unwrap();
    out
}

#[test]
fn a_static_file_without_a_sibling_is_compressed_per_request() {
    let root = Root::new();
    let mut c = client(&root, |d| d);
    let plain = get(&mut c, "/s/page.html", &[]);
    assert_eq!((plain.status().as_u16(), plain.text()), (200, page()));
    let tag = plain.header("etag").unwrap().to_owned();
    assert!(tag.starts_with('"'), "a static file's tag is strong: {tag}");
    assert_eq!(plain.header("accept-ranges"), Some("bytes"));
    assert_eq!(plain.header("vary"), Some("Accept-Encoding"), "caches must key on it");
    for (coding, decode) in [("gzip", gunzip as fn(&[u8]) -> String), ("br", unbrotli)] {
        let res = get(&mut c, "/s/page.html", &[("Accept-Encoding", coding)]);
        assert_eq!(res.header("content-encoding"), Some(coding));
        assert_eq!(decode(res.bytes()), page(), "{coding}");
        assert!(res.bytes().len() < page().len() / 4, "{coding}");
        assert_eq!(res.header("etag"), Some(format!("W/{tag}").as_str()), "{coding}: another representation");
        assert_eq!(res.header_all("etag").count(), 1);
        assert_eq!(res.header("accept-ranges"), None, "{coding}: ranges are of the uncompressed bytes");
        assert_eq!(res.header("vary"), Some("Accept-Encoding"));
        assert_eq!(res.header("last-modified"), plain.header("last-modified"));
        let head = c.request("HEAD", "/s/page.html").header("Accept-Encoding", coding).send();
        for name in ["content-encoding", "content-length", "etag", "vary", "accept-ranges"] {
            assert_eq!(head.header(name), res.header(name), "HEAD {coding} {name}");
        }
    }
}

#[test]
fn a_sibling_is_sent_as_it_is_and_a_missing_coding_made() {
    let root = Root::new();
    let mut c = client(&root, |d| d);
    let br = get(&mut c, "/s/app.js", &[("Accept-Encoding", "br")]);
    assert_eq!((br.header("content-encoding"), br.bytes()), (Some("br"), &b"brotli-bytes"[..]));
    assert_eq!(br.header_all("content-encoding").count(), 1);
    assert!(br.header("etag").unwrap().starts_with('"'), "the sibling's own strong tag");
    // No `.gz` beside it: gzip is made from the file.
    let gz = get(&mut c, "/s/app.js", &[("Accept-Encoding", "gzip")]);
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gunzip(gz.bytes()), page());
}

#[test]
fn what_static_compression_leaves_alone() {
    let root = Root::new();
    let mut c = client(&root, |d| d.max_cached_file(1000));
    let all = [("Accept-Encoding", "gzip, br, zstd")];
    // Under the threshold, a compressed type, a file sent with sendfile (past the
    // cache's size limit: its bytes are never in memory).
    for path in ["/s/tiny.css", "/s/pic.png", "/s/page.html"] {
        let res = get(&mut c, path, &all);
        assert_eq!((res.status().as_u16(), res.header("content-encoding")), (200, None), "{path}");
        assert_eq!(res.header("accept-ranges"), Some("bytes"), "{path}");
        assert!(res.header("etag").unwrap().starts_with('"'), "{path}");
    }
}

#[test]
fn ranges_and_preconditions_with_a_compressed_copy() {
    let root = Root::new();
    let mut c = client(&root, |d| d);
    let tag = get(&mut c, "/s/page.html", &[]).header("etag").unwrap().to_owned();
    let weak = format!("W/{tag}");
    let gz = [("Accept-Encoding", "gzip")];
    // A range is of the uncompressed bytes, sent as they are.
    let ranged = get(&mut c, "/s/page.html", &[gz[0], ("Range", "bytes=0-9")]);
    assert_eq!((ranged.status().as_u16(), ranged.bytes()), (206, &page().as_bytes()[..10]));
    assert_eq!(ranged.header("content-encoding"), None);
    // If-Range needs a strong match (RFC 9110 §13.1.5): the compressed copy's weak tag
    // gets the whole body, compressed.
    let whole = get(&mut c, "/s/page.html", &[gz[0], ("Range", "bytes=0-9"), ("If-Range", &weak)]);
    assert_eq!((whole.status().as_u16(), whole.header("content-encoding")), (200, Some("gzip")));
    assert_eq!(gunzip(whole.bytes()), page());
    // Revalidating the compressed copy: 304 with the tag the copy has, and Vary.
    let revalidated = get(&mut c, "/s/page.html", &[gz[0], ("If-None-Match", &weak)]);
    assert_eq!(revalidated.status().as_u16(), 304);
    assert_eq!(revalidated.header("etag"), Some(weak.as_str()));
    assert_eq!(revalidated.header("vary"), Some("Accept-Encoding"));
    // Revalidating the uncompressed copy: its strong tag.
    let revalidated = get(&mut c, "/s/page.html", &[("If-None-Match", &tag)]);
    assert_eq!((revalidated.status().as_u16(), revalidated.header("etag")), (304, Some(tag.as_str())));
    // If-Match compares strongly: the weak tag never matches.
    let refused = c.request("GET", "/s/page.html").header("If-Match", &weak).send();
    assert_eq!(refused.status().as_u16(), 412);
}
