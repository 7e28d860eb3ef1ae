//! A whole page with forms, tables, lists and components compiles and renders exactly
//! the expected bytes.

use kiln_html::{
    Asset, ExternalUrl, Flow, Fragment, Href, InputType, Interactive, ListItem, Metadata, Phrasing, SelectOption,
    TableCell, TableRow, html,
};

const CSS: Asset = Asset::new("/static/site.css");

struct Quote {
    id: i32,
    message: &'static str,
}

fn head_extra() -> Fragment<Metadata> {
    html! { meta charset="utf-8"; link rel="stylesheet" href=(CSS); }
}

fn nav_link(label: &str, to: impl Href) -> Fragment<Interactive> {
    html! { a href=(to) { (label) } }
}

fn nav() -> Fragment<Flow> {
    html! {
        nav {
            ul {
                li { (nav_link("Home", Asset::new("/"))) }
                li { (nav_link("About", ExternalUrl("https://example.org/about"))) }
            }
        }
    }
}

fn item(n: u32) -> Fragment<ListItem> {
    html! { li .odd[n % 2 == 1] { "item " (n) } }
}

fn emphasis(text: &str) -> Fragment<Phrasing> {
    html! { em { (text) } }
}

fn row(f: &Quote) -> Fragment<TableRow> {
    html! { tr { (cells(f)) } }
}

fn cells(f: &Quote) -> Fragment<TableCell> {
    html! { td { (f.id) } td { (f.message) } }
}

fn options(selected: &str) -> Fragment<SelectOption> {
    html! {
        @for lang in ["en", "fr"] {
            option value=(lang) selected[lang == selected] { (lang) }
        }
    }
}

fn page(quotes: &[Quote], user: Option<&str>) -> Fragment<kiln_html::Document> {
    html! {
        html lang="en" {
            head {
                title { "Quotes & more" }
                (head_extra())
            }
            body {
                (nav())
                main #content {
                    h1 { "Hello, " @if let Some(user) = user { (user) } @else { "stranger" } }
                    p { "A " (emphasis("<small>")) " page." }
                    ol start=3 { @for n in 1..=3 { (item(n)) } }
                    table {
                        caption { "Quotes" }
                        thead { tr { th scope="col" { "id" } th { "message" } } }
                        tbody { @for f in quotes { (row(f)) } }
                    }
                    form action=(Asset::new("/search")) method="post" {
                        label for="q" { "Search" }
                        input #q type="search" name="q" required placeholder="words";
                        input type=(InputType::Hidden) name="page" value=(2);
                        select name="lang" { (options("fr")) }
                        textarea name="note" rows=2 { "a < b" }
                        button type="submit" { "Go" }
                    }
                    dl { dt { "term" } dd { "definition" } }
                    @match quotes.len() {
                        0 => p { "none" }
                        n => { p { (n) " quotes" } }
                    }
                    pre { code { "fn main() {}" } }
                    img src=(CSS) alt="a \"quote\"" width=8 height=8;
                }
            }
        }
    }
}

#[test]
fn a_full_page_renders_exactly() {
    let quotes = [Quote { id: 1, message: "<script>alert(1)</script>" }, Quote { id: 2, message: "フレーム" }];
    let expected = concat!(
        "<!DOCTYPE html><html lang=\"en\"><head><title>Quotes &amp; more</title>",
        "<meta charset=\"utf-8\"><link rel=\"stylesheet\" href=\"/static/site.css\"></head><body>",
        "<nav><ul><li><a href=\"/\">Home</a></li><li><a href=\"https://example.org/about\">About</a></li></ul></nav>",
        "<main id=\"content\"><h1>Hello, ann</h1><p>A <em>&lt;small&gt;</em> page.</p>",
        "<ol start=\"3\"><li class=\"odd\">item 1</li><li>item 2</li><li class=\"odd\">item 3</li></ol>",
        "<table><caption>Quotes</caption><thead><tr><th scope=\"col\">id</th><th>message</th></tr></thead>",
        "<tbody><tr><td>1</td><td>&lt;script&gt;alert(1)&lt;/script&gt;</td></tr><tr><td>2</td><td>フレーム</td></tr></tbody></table>",
        "<form action=\"/search\" method=\"post\"><label for=\"q\">Search</label>",
        "<input id=\"q\" type=\"search\" name=\"q\" required placeholder=\"words\">",
        "<input type=\"hidden\" name=\"page\" value=\"2\">",
        "<select name=\"lang\"><option value=\"en\">en</option><option value=\"fr\" selected>fr</option></select>",
        "<textarea name=\"note\" rows=\"2\">\na &lt; b</textarea><button type=\"submit\">Go</button></form>",
        "<dl><dt>term</dt><dd>definition</dd></dl><p>2 quotes</p><pre>\n<code>fn main() {}</code></pre>",
        "<img src=\"/static/site.css\" alt=\"a &quot;quote&quot;\" width=\"8\" height=\"8\"></main></body></html>",
    );
    assert_eq!(page(&quotes, Some("ann")).as_str(), expected);
}

#[test]
fn branches_render_the_branch_taken() {
    let html = page(&[], None).into_string();
    assert!(html.contains("<h1>Hello, stranger</h1>"), "{html}");
    assert!(html.contains("<tbody></tbody>"), "{html}");
    assert!(html.contains("<p>none</p>"), "{html}");
}

#[test]
fn narrower_fragments_widen_into_flow() {
    let phrasing: Fragment<Flow> = emphasis("x").into();
    let interactive: Fragment<Flow> = nav_link("y", Asset::new("/y")).into();
    assert_eq!(html! { div { (phrasing) (interactive) } }.as_str(), "<div><em>x</em><a href=\"/y\">y</a></div>");
}
