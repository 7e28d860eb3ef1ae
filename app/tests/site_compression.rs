//! The demo site's pages, feed, sitemap and static files are compressed as the client
//! accepts; its benchmark endpoints answer as their uncompressed peers do.

mod site_support;

use site_support::Site;

#[test]
fn site_pages_feed_and_sitemap_are_compressed_and_benchmarks_are_not() {
    let site = Site::sqlite("compression", &[]);
    let mut v = site.visitor();
    for (target, coding) in [("/", "br"), ("/pages/tour", "gzip"), ("/feed.rss", "zstd"), ("/sitemap.xml", "gzip")] {
        let plain = v.get(target);
        assert_eq!(plain.status, 200, "{target}");
        assert_eq!(plain.header("Content-Encoding"), None, "{target}");
        assert_eq!(plain.header("Vary"), Some("Accept-Encoding"), "{target}");
        let packed = v.send("GET", target, &[("Accept-Encoding", coding)], None);
        assert_eq!(packed.header("Content-Encoding"), Some(coding), "{target}");
        assert!(packed.body.len() < plain.body.len(), "{target}: {} ≥ {}", packed.body.len(), plain.body.len());
    }
    // A static file without a precompressed sibling, compressed per request.
    let target = "/static/site.css";
    let plain = v.get(target);
    let packed = v.send("GET", target, &[("Accept-Encoding", "gzip")], None);
    assert_eq!((packed.status, packed.header("Content-Encoding")), (200, Some("gzip")), "{target}");
    assert!(packed.body.len() < plain.body.len(), "{target}");
    let tag = plain.header("ETag").expect("a static file's tag");
    assert_eq!(packed.header("ETag"), Some(format!("W/{tag}").as_str()), "{target}");
    for target in ["/hello", "/json", "/bigtable?rows=50&cols=50", "/plaintext", "/static/hello.txt", "/static/64k.bin"]
    {
        let res = v.send("GET", target, &[("Accept-Encoding", "gzip, br, zstd")], None);
        assert_eq!(res.status, 200, "{target}");
        assert_eq!((res.header("Content-Encoding"), res.header("Vary")), (None, None), "{target}");
    }
}
