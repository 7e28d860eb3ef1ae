//! The RSS 2.0 feed of the newest pages and the sitemap of all of them, with
//! absolute links made from the configured public URL (never from `Host`).

use futures_util::future::try_join;
use kiln::markup::escape;
use kiln::{PublicUrl, Rss, State, Xml};

use super::errors::SiteError;
use super::layout::{self, SITE_NAME};
use super::markdown;
use super::model;
use super::routes::{Feed, Home, ShowPage, Sitemap};
use crate::state::Worker;

/// Pages in the feed.
const FEED_ITEMS: i64 = 20;
/// Most URLs one sitemap may list (the sitemaps protocol's limit).
const SITEMAP_URLS: i64 = 50_000;

pub(crate) async fn feed(_: Feed, url: PublicUrl, State(worker): State<Worker>) -> Result<Rss<String>, SiteError> {
    let (pages, last_updated) =
        try_join(model::newest_pages(&worker.db, FEED_ITEMS), model::last_updated(&worker.db)).await?;
    let mut xml = String::with_capacity(4096);
    xml.push_str(r#"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>"#);
    escape(SITE_NAME, &mut xml);
    xml.push_str("</title><link>");
    escape(&url.link(Home { page: None }).to_string(), &mut xml);
    xml.push_str("</link><description>The pages of the kiln demo wiki, newest first.</description>");
    // The last change to any page, an edit included: the newest page's `updated`
    // missed the edits of older pages, whose items changed with them.
    if let Some(updated) = last_updated {
        push_element(&mut xml, "lastBuildDate", &layout::datetime(updated).to_rfc2822());
    }
    for page in &pages {
        let link = url.link(ShowPage { slug: page.slug.clone() }).to_string();
        xml.push_str("<item>");
        push_element(&mut xml, "title", &page.title);
        push_element(&mut xml, "link", &link);
        xml.push_str(r#"<guid isPermaLink="true">"#);
        escape(&link, &mut xml);
        xml.push_str("</guid>");
        push_element(&mut xml, "pubDate", &layout::datetime(page.created).to_rfc2822());
        push_element(&mut xml, "description", &markdown::to_html(&page.body));
        xml.push_str("</item>");
    }
    xml.push_str("</channel></rss>");
    Ok(Rss(xml))
}

pub(crate) async fn sitemap(
    _: Sitemap,
    url: PublicUrl,
    State(worker): State<Worker>,
) -> Result<Xml<String>, SiteError> {
    let entries = model::newest(&worker.db, SITEMAP_URLS, 0).await?;
    let mut xml = String::with_capacity(256 + entries.len() * 128);
    xml.push_str(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
    );
    xml.push_str("<url>");
    push_element(&mut xml, "loc", &url.link(Home { page: None }).to_string());
    xml.push_str("</url>");
    for entry in &entries {
        xml.push_str("<url>");
        push_element(&mut xml, "loc", &url.link(ShowPage { slug: entry.slug.clone() }).to_string());
        push_element(&mut xml, "lastmod", &layout::day(entry.updated));
        xml.push_str("</url>");
    }
    xml.push_str("</urlset>");
    Ok(Xml(xml))
}

/// `<name>text</name>`, the text escaped.
fn push_element(xml: &mut String, name: &str, text: &str) {
    xml.push('<');
    xml.push_str(name);
    xml.push('>');
    escape(text, xml);
    xml.push_str("</");
    xml.push_str(name);
    xml.push('>');
}
