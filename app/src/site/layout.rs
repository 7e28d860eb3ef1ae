//! The frame every page of the site is drawn in: head (title, stylesheet, feed),
//! the site's header and navigation, the content, the footer.

use kiln::markup::{Asset, Document, Flow, Fragment, Phrasing};
use kiln::{Typed, asset, html};

use super::routes::{EditorHome, Favicon, Feed, Home, Sitemap};

/// The site's name, after each page's title and in the feed.
pub(crate) const SITE_NAME: &str = "kiln wiki";

/// The stylesheet, by its content-hashed name: a missing file does not compile.
const STYLESHEET: Asset = Asset::new(asset!("site.css"));

/// A whole page of the site: `title`, then `content` inside `<main>`.
pub(crate) fn page(title: &str, content: Fragment<Flow>) -> Fragment<Document> {
    html! {
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — " (SITE_NAME) }
                link rel="stylesheet" href=(STYLESHEET);
                link rel="alternate" type="application/rss+xml" title=(SITE_NAME) href=(Feed);
            }
            body {
                header.site {
                    a.brand href=(Home { page: None }) { (SITE_NAME) }
                    nav {
                        a href=(Home { page: None }) { "Pages" }
                        " "
                        a href=(Feed) { "Feed" }
                        " "
                        a href=(EditorHome) { "Editor" }
                    }
                }
                main { (content) }
                footer.site {
                    p { "Rendered on every request by kiln. " a href=(Sitemap) { "Sitemap" } }
                }
            }
        }
    }
}

/// `/favicon.ico`, which browsers ask for on every site: the site's icon (SVG), so
/// that no page logs a failed request in the browser's console.
pub(crate) async fn favicon(_: Favicon) -> ([(&'static str, &'static str); 1], Typed<&'static [u8]>) {
    let icon: &'static [u8] = include_bytes!("../../public/favicon.svg");
    ([("Cache-Control", "public, max-age=86400")], Typed("image/svg+xml", icon))
}

/// A date as `2026-01-02`.
pub(crate) fn day(unix: i64) -> String {
    datetime(unix).format("%Y-%m-%d").to_string()
}

/// `<time datetime="2026-01-02T10:00:00Z">2026-01-02 10:00</time>`, or the day alone.
pub(crate) fn time(unix: i64, with_hour: bool) -> Fragment<Phrasing> {
    let at = datetime(unix);
    let shown = if with_hour { at.format("%Y-%m-%d %H:%M") } else { at.format("%Y-%m-%d") };
    html! { time datetime=(at.format("%Y-%m-%dT%H:%M:%SZ").to_string()) { (shown.to_string()) } }
}

/// Unix seconds as a UTC date and time; out of range is the epoch.
pub(crate) fn datetime(unix: i64) -> kiln::db::chrono::DateTime<kiln::db::chrono::Utc> {
    kiln::db::chrono::DateTime::from_timestamp(unix, 0).unwrap_or_default()
}
