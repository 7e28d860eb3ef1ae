//! `Live::direct`: a page's first answer renders a live view's markup straight into a
//! string as `html!` does; the HTML and the fingerprint are the split rendering's.

use kiln_html::{Live, html, live_html};

/// Renders the markup with `html!`, with `live_html!` split and under `Live::direct`;
/// asserts the same bytes and fingerprint, and gives the direct one.
macro_rules! same_directly {
    ($($markup:tt)*) => {{
        let page = html! { $($markup)* };
        let split: Live<()> = live_html! { $($markup)* };
        let direct: Live<()> = Live::direct(|| live_html! { $($markup)* });
        assert_eq!(direct.to_html(), page.as_str());
        assert_eq!(split.to_html(), page.as_str());
        assert_eq!(direct.fingerprint(), split.part().statics().fingerprint());
        direct
    }};
}

struct Row {
    id: u32,
    name: &'static str,
    done: bool,
}

fn rows() -> Vec<Row> {
    vec![
        Row { id: 7, name: "<seven>", done: true },
        Row { id: 3, name: "three & more", done: false },
        Row { id: 9, name: "nine", done: false },
    ]
}

#[test]
fn live_direct_renders_text_loops_conditionals_and_matches_as_html_does() {
    for (user, role, rows) in [("<ann>", 0, rows()), ("bo", 1, Vec::new()), ("cy", 2, rows())] {
        let live = same_directly! {
            h1.title[role == 1] { "Hello, " (user) }
            @let count = rows.len();
            @if count == 0 { p { "none" } } @else if count > 2 { p { (count) " rows" } }
            @match role { 0 => { em { "admin" } } _ => { "guest" } }
            ul {
                @for row in rows.iter(); key = row.id {
                    li id=(row.id) .done[row.done] { (row.name) @if row.done { " ✓" } }
                }
            }
        };
        assert_eq!(live.into_html(), live_html_split(user, role, &rows));
    }
}

/// The split rendering of the same markup, joined.
fn live_html_split(user: &str, role: u32, rows: &[Row]) -> String {
    let live: Live<()> = live_html! {
        h1.title[role == 1] { "Hello, " (user) }
        @let count = rows.len();
        @if count == 0 { p { "none" } } @else if count > 2 { p { (count) " rows" } }
        @match role { 0 => { em { "admin" } } _ => { "guest" } }
        ul {
            @for row in rows.iter(); key = row.id {
                li id=(row.id) .done[row.done] { (row.name) @if row.done { " ✓" } }
            }
        }
    };
    live.to_html()
}

#[test]
fn live_direct_consumes_what_the_markup_iterates() {
    let names = vec!["a".to_owned(), "<b>".to_owned()];
    let direct: Live<()> = Live::direct(|| {
        let names = names.clone().into_iter();
        live_html! { ol { @for name in names; key = name { li { (name) } } } }
    });
    assert_eq!(direct.to_html(), "<ol><li>a</li><li>&lt;b&gt;</li></ol>");
}

#[test]
fn live_direct_applies_to_one_rendering_and_later_ones_are_split_again() {
    let first: Live<()> = Live::direct(|| live_html! { p { "first" } });
    assert_eq!(first.to_html(), "<p>first</p>");
    let later: Live<()> = live_html! { p { (1 + 1) } };
    assert_eq!(later.part().slots().len(), 1, "a rendering after `direct` has its slots");
    // A `direct` whose render builds no `Live` of its own leaves no flag behind either.
    let _ = Live::direct(|| later);
    let again: Live<()> = live_html! { p { (3) } };
    assert_eq!(again.part().slots().len(), 1);
}

#[test]
#[should_panic(expected = "holds its HTML only")]
fn live_direct_has_no_part() {
    let direct: Live<()> = Live::direct(|| live_html! { p { (1) } });
    let _ = direct.part();
}

#[test]
fn live_direct_after_writes_the_html_after_the_prefix_once() {
    let (html, fingerprint) = Live::<()>::direct_after("<div>", || live_html! { p { (1) } });
    let split: Live<()> = live_html! { p { (1) } };
    assert_eq!((html.as_str(), fingerprint), ("<div><p>1</p>", split.part().statics().fingerprint()));
    // A rendering built first takes the prefix; the one returned is still written after
    // it, and the first one renders without it.
    let (html, _) = Live::<()>::direct_after("<div>", || {
        let inner: Live<()> = live_html! { b { "in" } };
        live_html! { p { (kiln_html::PreEscaped(inner.to_html())) } }
    });
    assert_eq!(html, "<div><p><b>in</b></p>");
}
