//! A page's comments as they are posted, on the bus and as Server-Sent Events: each
//! comment stored is published, rendered as the page lists it, to the page's topic,
//! which every open copy of the page (its live view, `live.rs`) listens to on any
//! instance behind the load balancer, and which `GET /pages/{slug}/live` streams to
//! other clients (a reconnecting one sends the last id it saw and gets what it
//! missed from the bus's window).

use kiln::markup::{Flow, Fragment};
use kiln::realtime::{BusEvents, LastEventId, LocalBus, Sse};
use kiln::{State, html};

use super::errors::SiteError;
use super::layout;
use super::model::{self, Comment};
use super::routes::LiveComments;
use crate::state::Worker;

/// The bus topic of a page's comments.
pub(crate) fn topic(slug: &str) -> String {
    format!("comments/{slug}")
}

/// `GET /pages/{slug}/live`: the page's new comments as they are posted; after a
/// reconnect, first those missed since `Last-Event-ID`. 404 for a page that does not
/// exist, so that nobody makes the workers keep topics for pages that never were.
pub(crate) async fn events(
    route: LiveComments,
    State(worker): State<Worker>,
    last: Option<LastEventId>,
) -> Result<Sse<BusEvents>, SiteError> {
    // Whether the page exists, not the page: each subscription would otherwise load its
    // whole text on the database thread only to drop it, and a burst of subscribers
    // leaves that thread's heap grown by as many texts (issue 23's idle memory).
    if !model::page_exists(&worker.db, &route.slug).await? {
        return Err(SiteError::not_found());
    }
    let after = last.and_then(|id| id.parse());
    Ok(Sse::new(worker.site.bus.resume(&topic(&route.slug), after).events()))
}

/// Tells the open copies of the page about a comment just stored. The comment is
/// stored whatever happens here: a bus that is down costs only the live update.
pub(crate) async fn publish(bus: &LocalBus, slug: &str, comment: &Comment) {
    if let Err(e) = bus.publish(&topic(slug), item(comment).as_str()).await {
        eprintln!("kiln-demo: comment {} on {slug} not sent live: {e}", comment.id);
    }
}

/// The comment as the page lists it (`page_view::Thread`), inside the `ol` that the
/// content model asks an `li` to be in.
fn item(c: &Comment) -> Fragment<Flow> {
    let at = layout::Stamp::new(c.created);
    html! {
        ol {
            li id=(format_args!("c{}", c.id)) {
                p.byline { strong { (c.author) } " " time datetime=(at.iso()) { (at.minute()) } }
                p.text { (c.body) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_comment_is_rendered_byte_for_byte_as_the_page_lists_it() {
        let (mut c, _dir) = super::super::tests::client("events");
        let page = c.get("/pages/tour");
        let cookie = page.header("set-cookie").expect("a CSRF cookie").split(';').next().expect("pair").to_owned();
        let text = page.text();
        let token = text.split("name=\"csrf_token\" value=\"").nth(1).and_then(|t| t.split('"').next()).expect("token");
        let (author, body) = ("Ann <a>", "1 < 2 & \"so\"\nsecond line");
        let res = c
            .request("POST", "/pages/tour/comments")
            .header("Cookie", &cookie)
            .form(&[("csrf_token", token), ("author", author), ("body", body)])
            .send();
        assert_eq!(res.status(), 303, "{}", res.text());
        let id: i64 =
            res.header("location").and_then(|l| l.split("#c").nth(1)).and_then(|n| n.parse().ok()).expect("id");
        let page = c.request("GET", "/pages/tour").header("Cookie", &cookie).send();
        let html = page.text();
        let start = html.find(&format!("<li id=\"c{id}\">")).expect("the comment on the page");
        let li = &html[start..start + html[start..].find("</li>").expect("its end") + "</li>".len()];
        let iso = li.split("datetime=\"").nth(1).and_then(|d| d.split('"').next()).expect("its time");
        let created = kiln::db::chrono::DateTime::parse_from_rfc3339(iso).expect("a time").timestamp();
        let comment = Comment { id, author: author.into(), body: body.into(), created };
        assert_eq!(item(&comment).into_string(), format!("<ol>{li}</ol>"));
    }
}
