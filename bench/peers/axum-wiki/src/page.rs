//! The wiki page as kiln's site renders it (docs/wiki-page.md; app/src/site/page_view.rs, layout.rs): the
//! page's Markdown turned into HTML with pulldown-cmark on every request (no cache), its
//! comments as escaped text, the comment form with its CSRF token, all in the site's
//! layout; written with maud, as an axum or actix user would. actix-wiki shares this file,
//! so both peers send the same bytes.

use chrono::{DateTime, Utc};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use pulldown_cmark::{html::push_html, Event, Options, Parser};

/// The site's name, after each page's title.
const SITE_NAME: &str = "kiln wiki";
/// Longest name a comment may carry, in characters (the form's `maxlength`).
const MAX_AUTHOR: usize = 80;
/// Longest comment, in characters.
const MAX_COMMENT: usize = 4000;
/// The Markdown extensions kiln's site turns on.
const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);

/// One page as stored.
pub struct Page {
    pub slug: String,
    pub title: String,
    /// Markdown.
    pub body: String,
    /// Unix seconds.
    pub updated: i64,
}

/// One comment as stored; its text is the visitor's, so it is escaped, never trusted.
pub struct Comment {
    pub id: i64,
    pub author: String,
    pub body: String,
    /// Unix seconds.
    pub created: i64,
}

/// The HTML of `source`; raw HTML in it becomes escaped text, as on kiln's site.
fn markdown(source: &str) -> PreEscaped<String> {
    let mut out = String::with_capacity(source.len() + source.len() / 4);
    let events = Parser::new_ext(source, OPTIONS).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    push_html(&mut out, events);
    PreEscaped(out)
}

fn datetime(unix: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(unix, 0).unwrap_or_default()
}

/// `<time datetime="2026-01-02T10:00:00Z">2026-01-02 10:00</time>`, or the day alone.
fn time(unix: i64, with_hour: bool) -> Markup {
    let at = datetime(unix);
    let shown = if with_hour { at.format("%Y-%m-%d %H:%M") } else { at.format("%Y-%m-%d") };
    html! { time datetime=(at.format("%Y-%m-%dT%H:%M:%SZ")) { (shown) } }
}

fn layout(title: &str, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — " (SITE_NAME) }
                link rel="stylesheet" href="/static/site.css";
                link rel="alternate" type="application/rss+xml" title=(SITE_NAME) href="/feed.rss";
            }
            body {
                header.site {
                    a.brand href="/" { (SITE_NAME) }
                    nav {
                        a href="/" { "Pages" }
                        " "
                        a href="/feed.rss" { "Feed" }
                        " "
                        a href="/editor" { "Editor" }
                    }
                }
                main { (content) }
                footer.site {
                    p { "Rendered on every request by kiln. " a href="/sitemap.xml" { "Sitemap" } }
                }
            }
        }
    }
}

fn comment_form(slug: &str, csrf_token: &str) -> Markup {
    html! {
        form.comment method="post" action={ "/pages/" (slug) "/comments" } {
            input type="hidden" name="csrf_token" value=(csrf_token);
            p {
                label for="author" { "Name" }
                input #author name="author" maxlength=(MAX_AUTHOR) required value="";
            }
            p {
                label for="body" { "Comment" }
                // The newline kiln writes after `<textarea>` (which HTML drops), for the same bytes.
                textarea #body name="body" rows="5" maxlength=(MAX_COMMENT) required { "\n" }
            }
            p { button type="submit" { "Post comment" } }
        }
    }
}

/// The whole response body of `GET /pages/{slug}`.
pub fn render(page: &Page, comments: &[Comment], csrf_token: &str) -> String {
    let content = html! {
        article {
            h1 { (page.title) }
            p.meta { "Updated " (time(page.updated, false)) }
            (markdown(&page.body))
        }
        section #comments {
            h2 { "Comments (" (comments.len()) ")" }
            ol.comments {
                @for c in comments {
                    li id={ "c" (c.id) } {
                        p.byline { strong { (c.author) } " " (time(c.created, true)) }
                        p.text { (c.body) }
                    }
                }
            }
            (comment_form(&page.slug, csrf_token))
        }
    };
    layout(&page.title, content).into_string()
}
