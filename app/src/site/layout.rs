//! The frame every page of the site is drawn in: head (title, stylesheet, feed),
//! the site's header and navigation, the content, the footer.

use kiln::markup::{Asset, Document, Flow, Fragment, Phrasing};
use kiln::{Typed, asset, html};

use super::routes::Favicon;

/// The site's name, after each page's title and in the feed.
pub(crate) const SITE_NAME: &str = "kiln wiki";

/// The stylesheet, by its content-hashed name: a missing file does not compile.
pub(crate) const STYLESHEET_LINK: &str = asset!("site.css");
pub(crate) const STYLESHEET: Asset = Asset::new(STYLESHEET_LINK);

/// A whole page of the site: `title`, then the content inside `<main>`, written as
/// `html!` markup in braces and rendered straight into the page: the one page with
/// much content (a wiki page) is not rendered apart first and copied in.
macro_rules! site_page {
    ($title:expr, { $($content:tt)* }) => {
        kiln::html! {
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { ($title) " — " ($crate::site::layout::SITE_NAME) }
                    link rel="stylesheet" href=($crate::site::layout::STYLESHEET);
                    link rel="alternate" type="application/rss+xml" title=($crate::site::layout::SITE_NAME)
                        href=($crate::site::routes::Feed);
                }
                body {
                    header.site {
                        a.brand href=($crate::site::routes::Home { page: None }) { ($crate::site::layout::SITE_NAME) }
                        nav {
                            a href=($crate::site::routes::Home { page: None }) { "Pages" }
                            " "
                            a href=($crate::site::routes::Feed) { "Feed" }
                            " "
                            a href=($crate::site::routes::EditorHome) { "Editor" }
                        }
                    }
                    main { $($content)* }
                    footer.site {
                        p { "Rendered on every request by kiln. " a href=($crate::site::routes::Sitemap) { "Sitemap" } }
                    }
                }
            }
        }
    };
}
pub(crate) use site_page;

/// A whole page of the site: `title`, then `content` inside `<main>`.
pub(crate) fn page(title: &str, content: Fragment<Flow>) -> Fragment<Document> {
    site_page!(title, { (content) })
}

/// `/favicon.ico`, which browsers ask for on every site: the site's icon (SVG), so
/// that no page logs a failed request in the browser's console.
pub(crate) async fn favicon(_: Favicon) -> ([(&'static str, &'static str); 1], Typed<&'static [u8]>) {
    let icon: &'static [u8] = include_bytes!("../../public/favicon.svg");
    ([("Cache-Control", "public, max-age=86400")], Typed("image/svg+xml", icon))
}

/// A date as `2026-01-02`.
pub(crate) fn day(unix: i64) -> String {
    Stamp::new(unix).day().to_owned()
}

/// `<time datetime="2026-01-02T10:00:00Z">2026-01-02 10:00</time>`, or the day alone.
pub(crate) fn time(unix: i64, with_hour: bool) -> Fragment<Phrasing> {
    let stamp = Stamp::new(unix);
    let shown = if with_hour { stamp.minute() } else { stamp.day() };
    html! { time datetime=(stamp.iso()) { (shown) } }
}

/// A moment written out once as `2026-01-02T10:00:00Z`, whose prefixes are the day
/// and the minute: a page shows a time per comment, and a formatter that parses its
/// pattern on every call cost more than the rest of the comment.
pub(crate) struct Stamp {
    iso: [u8; 20],
    shown: [u8; 16],
}

impl Stamp {
    /// Unix seconds, UTC; out of range is the epoch.
    pub(crate) fn new(unix: i64) -> Self {
        use kiln::db::chrono::{Datelike, Timelike};
        let at = datetime(unix);
        let mut text = *b"0000-00-00T00:00:00Z";
        let mut put = |at: usize, value: u32, digits: usize| {
            let mut v = value;
            for i in (0..digits).rev() {
                text[at + i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        put(0, at.year().clamp(0, 9999) as u32, 4);
        put(5, at.month(), 2);
        put(8, at.day(), 2);
        put(11, at.hour(), 2);
        put(14, at.minute(), 2);
        put(17, at.second(), 2);
        let mut shown = [0; 16];
        shown.copy_from_slice(&text[..16]);
        shown[10] = b' ';
        Stamp { iso: text, shown }
    }

    /// `2026-01-02T10:00:00Z`.
    pub(crate) fn iso(&self) -> &str {
        ascii(&self.iso)
    }

    /// `2026-01-02 10:00`.
    pub(crate) fn minute(&self) -> &str {
        ascii(&self.shown)
    }

    /// `2026-01-02`.
    pub(crate) fn day(&self) -> &str {
        ascii(&self.iso[..10])
    }
}

/// Text of ASCII digits and separators, as `Stamp` writes it.
fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// Unix seconds as a UTC date and time; out of range is the epoch.
pub(crate) fn datetime(unix: i64) -> kiln::db::chrono::DateTime<kiln::db::chrono::Utc> {
    kiln::db::chrono::DateTime::from_timestamp(unix, 0).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::Stamp;

    #[test]
    fn a_stamp_reads_as_chrono_would_write_it() {
        for unix in [0, 1_700_000_000, 1_767_225_599, 951_782_400] {
            let stamp = Stamp::new(unix);
            let at = super::datetime(unix);
            assert_eq!(stamp.iso(), at.format("%Y-%m-%dT%H:%M:%SZ").to_string());
            assert_eq!(stamp.minute(), at.format("%Y-%m-%d %H:%M").to_string());
            assert_eq!(stamp.day(), at.format("%Y-%m-%d").to_string());
        }
    }
}
