//! The first page of a live view beside the same page rendered by `html!` (issue 31:
//! "the first page of a live view costs no more than 1.05× the same page rendered by
//! `html!`"). `GET /bench/first/live` is a live view; `GET /bench/first/html` is a
//! handler rendering the same markup, in the same layout, with `html!`. Both are a
//! heading, a filter form carrying the visitor's CSRF token (whose cookie both set) and
//! a table of 100 keyed rows; the live one adds only its container, token and script.
//!
//! One template serves both (`table!`, below): `html!` accepts and ignores `; key = ..`, and
//! the form's event is written as the attribute `on:submit` renders, so the two bodies
//! are the same bytes. `bench/kilnbench/instructions.py --pair` compares them.

use std::marker::PhantomData;

use kiln::live::{Live, LiveSocket, LiveView};
use kiln::markup::{Document, Flow, Fragment};
use kiln::{App, CSRF_FIELD, Csrf, FromRequest, Key, Rejection, RequestContext, Route, html, live_html};
use serde::Deserialize;

use crate::state::Worker;

/// Rows in the table.
const ROWS: usize = 100;

/// The live view's page.
#[derive(Route)]
#[route("/bench/first/live")]
pub(crate) struct BenchFirstLive;

/// The same page by `html!`.
#[derive(Route)]
#[route("/bench/first/html")]
pub(crate) struct BenchFirstHtml;

/// The `html!` page with a token signed into it as a live page's is: the floor under
/// the live page's first answer, since a live page must carry a token tied to its view,
/// page and visitor (issue 31, item 6) and signing one is work `html!` never does.
#[derive(Route)]
#[route("/bench/first/signed")]
pub(crate) struct BenchFirstSigned;

/// Adds the pair's two routes, and the signed floor.
pub(crate) fn mount(app: App<Worker>) -> App<Worker> {
    app.live::<Scores<Worker>>().route(html_page).route(signed_page)
}

/// One row of the table.
struct Row {
    id: u32,
    name: String,
    team: &'static str,
    score: u32,
    active: bool,
}

/// The filter form's fields.
#[derive(Debug, Deserialize)]
pub(crate) struct Filter {
    name: Option<String>,
}

/// What the live page sends: the filter form, submitted.
#[derive(Deserialize)]
pub(crate) enum Event {
    Filter(Filter),
}

/// The table's state: its rows, the filter typed, the visitor's CSRF token; on an app
/// of any state `S` (it needs none), so that its test need not open the demo's database.
pub(crate) struct Scores<S> {
    rows: Vec<Row>,
    filter: String,
    csrf: Csrf,
    state: PhantomData<fn() -> S>,
}

impl<S> Scores<S> {
    fn new(csrf: Csrf) -> Self {
        const TEAMS: [&str; 4] = ["red", "green", "blue", "gold"];
        let rows = (0..ROWS as u32)
            .map(|i| Row {
                id: i + 1,
                name: format!("player-{}", i + 1),
                team: TEAMS[i as usize % TEAMS.len()],
                score: (i * 37 + 11) % 100,
                active: i % 3 != 0,
            })
            .collect();
        Scores { rows, filter: String::new(), csrf, state: PhantomData }
    }

    /// The rows the filter keeps.
    fn shown(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|row| row.name.contains(&self.filter))
    }
}

/// The page's markup, by `$mac` (`html` or `live_html`); `$($submit)*` is the form's
/// event: `on:submit=(Event::Filter)` for the live view, the attribute it renders for
/// `html!`.
macro_rules! table {
    ($mac:ident, $scores:expr, $($submit:tt)*) => {{
        let scores = $scores;
        $mac! {
            h1 { "Scores" }
            form.filter method="get" $($submit)* {
                input type="hidden" name=(CSRF_FIELD) value=(scores.csrf.token());
                label { "Name " input type="search" name="name" value=(scores.filter); }
                button type="submit" { "Filter" }
            }
            table.scores {
                thead { tr { th { "#" } th { "Name" } th { "Team" } th { "Score" } th { "Status" } } }
                tbody {
                    @for row in scores.shown(); key = row.id {
                        tr.top[row.score >= 90] id=(format_args!("row-{}", row.id)) {
                            td { (row.id) }
                            td { (row.name) }
                            td.team { (row.team) }
                            td.score { (row.score) }
                            td { @if row.active { "active" } @else { em { "away" } } }
                        }
                    }
                }
            }
        }
    }};
}

/// The layout both pages share.
fn layout(content: Fragment<Flow>) -> Fragment<Document> {
    html! {
        html lang="en" {
            head { meta charset="utf-8"; title { "Scores" } }
            body { main { (content) } }
        }
    }
}

impl<S: 'static> LiveView for Scores<S> {
    type AppState = S;
    type Route = BenchFirstLive;
    type Event = Event;

    async fn mount(_: BenchFirstLive, cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(Scores::new(Csrf::from_request(&cx)?))
    }

    fn handle(&mut self, Event::Filter(filter): Event, _: &mut LiveSocket<Self>) {
        self.filter = filter.name.unwrap_or_default();
    }

    fn render(&self) -> Live<Event> {
        table!(live_html, self, on:submit=(Event::Filter))
    }

    fn visitor(&self) -> Option<&Csrf> {
        Some(&self.csrf)
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        layout(view)
    }
}

/// The same page as the live view's first answer, by `html!`.
fn body<S>(scores: &Scores<S>) -> Fragment<Flow> {
    table!(html, scores, data - kiln - submit = "Filter")
}

async fn html_page(_: BenchFirstHtml, csrf: Csrf) -> (Csrf, Fragment<Document>) {
    let scores = Scores::<()>::new(csrf);
    let page = layout(body(&scores));
    (scores.csrf, page)
}

/// The `html!` page, its content in a container carrying a token signed over claims of
/// the live token's size (the view, the page, 32 hex digits of the visitor), as the
/// live page's first answer signs one.
async fn signed_page(_: BenchFirstSigned, csrf: Csrf, key: Key) -> (Csrf, Fragment<Document>) {
    let scores = Scores::<()>::new(csrf);
    let page = BenchFirstLive.to_string();
    let visitor = scores.csrf.token().get(..32).unwrap_or_default();
    let context = format!("bench-first {} {} {:016x}{visitor}{page}", visitor.len(), page.len(), ROWS);
    let expires = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let token = key.sign(&context, &format!("{}.{:04x}.{:04x}.{:04x}", expires + 14_400, 1, 2, 3));
    let content = body(&scores);
    let page = layout(html! { div data-token=(token) { (content) } });
    (scores.csrf, page)
}

#[cfg(test)]
mod tests {
    use kiln::test::TestClient;
    use kiln::{App, Key};

    use super::*;

    /// The CSRF token of a page's form (each page is a new visitor's).
    fn csrf_token(page: &str) -> &str {
        let field = r#"name="csrf_token" value=""#;
        let at = page.find(field).expect("a CSRF field") + field.len();
        &page[at..at + page[at..].find('"').expect("its end")]
    }

    #[test]
    fn bench_first_live_and_html_are_the_same_page_but_for_the_live_container() {
        // Both routes on an app of their own, without the demo's state.
        let app = App::new(|_| ()).secret_key(Key::generate()).live::<Scores<()>>().route(html_page);
        let mut client = TestClient::new(app);
        let html = client.get("/bench/first/html");
        assert_eq!(html.status(), 200);
        assert!(html.header("set-cookie").is_some_and(|c| c.starts_with("kiln_csrf=")));
        let html = html.text();
        let live = client.get("/bench/first/live");
        assert_eq!(live.status(), 200);
        assert!(live.header("set-cookie").is_some_and(|c| c.starts_with("kiln_csrf=")));
        let live = live.text();
        assert_eq!(html.matches(" id=\"row-").count(), ROWS, "{html}");
        assert!(html.contains(r#"<tr class="top" id="row-6">"#) && html.contains("<em>away</em>"), "{html}");

        // Both bodies with their visitor's token made the same, and the live one's
        // container and script taken away: the same bytes.
        let live = live.replace(csrf_token(&live), csrf_token(&html));
        let open = live.find("<div data-kiln-live=").expect("the live container");
        let inner = open + live[open..].find('>').expect("its end") + 1;
        let close = live.rfind("</div><script src=\"/_kiln/live.").expect("the container's end and the script");
        let script_end = close + live[close..].find("</script>").expect("the script's end") + "</script>".len();
        let unwrapped = format!("{}{}{}", &live[..open], &live[inner..close], &live[script_end..]);
        assert_eq!(unwrapped, html);
    }

    #[test]
    fn bench_first_signed_is_the_html_page_in_a_container_with_a_signed_token() {
        let key = Key::generate();
        let app = App::new(|_| ()).secret_key(key.clone()).route(html_page).route(signed_page);
        let mut client = TestClient::new(app);
        let html = client.get("/bench/first/html").text();
        let signed = client.get("/bench/first/signed").text();
        let signed = signed.replace(csrf_token(&signed), csrf_token(&html));
        let attribute = "<div data-token=\"";
        let open = signed.find(attribute).expect("the container");
        let at = open + attribute.len();
        let token = &signed[at..at + signed[at..].find('"').expect("its end")];
        assert!(token.rsplit_once('.').is_some_and(|(_, sig)| sig.len() == 64), "{token}");
        let inner = open + signed[open..].find('>').expect("its end") + 1;
        let close = signed.rfind("</div></main>").expect("the container's end");
        assert_eq!(format!("{}{}{}", &signed[..open], &signed[inner..close], &signed[close + 6..]), html);
    }
}
