//! `live_html!` against `html!`: the statics and slots of a live view, joined, are the
//! page `html!` renders for the same markup, byte for byte; and the split puts static
//! markup in statics, values in text slots, branches in parts and loops in lists.

use kiln_html::{Flow, Fragment, Live, Slot, html, live_html};

/// Renders the markup with both macros and asserts the same bytes; gives the live one.
macro_rules! same {
    ($($markup:tt)*) => {{
        let page = html! { $($markup)* };
        let live: Live<()> = live_html! { $($markup)* };
        assert_eq!(live.to_html(), page.as_str());
        live
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

fn badge(text: &str) -> Fragment<Flow> {
    html! { div.badge { (text) } }
}

#[test]
fn live_html_renders_text_and_splices_as_html_does() {
    let user = "<admin>";
    let live = same! { div #main { h1 { "Hello, " (user) "!" } p { "static only" } } };
    assert_eq!(live.part().statics().parts(), ["<div id=\"main\"><h1>Hello, ", "!</h1><p>static only</p></div>"]);
    assert_eq!(live.part().slots(), [Slot::Text("&lt;admin&gt;".into())]);
}

#[test]
fn live_html_renders_attributes_with_dynamic_values_as_html_does() {
    let (name, size, checked, title) = ("q\"x", 12u32, true, Some("a & b"));
    let live = same! {
        form.search.wide[size > 10] {
            input type="text" name=(name) size=(size) checked[checked] title=[title];
            input type="checkbox" name="none" title=[None::<&str>];
            div class=(name) .on[checked] { (badge("b")) }
        }
    };
    // Neighbouring code between two statics is one slot.
    let texts = live.part().slots().iter().filter(|s| matches!(s, Slot::Text(_))).count();
    assert_eq!(texts, live.part().slots().len());
}

#[test]
fn live_html_renders_conditionals_as_nested_parts() {
    for (logged_in, role) in [(true, 0), (false, 1), (true, 2)] {
        let live = same! {
            div {
                @if logged_in { p { "Welcome " (role) } } @else { p { "Sign in" } }
                @if role > 1 { b { "admin" } }
                @match role { 0 => { i { "reader" } }, 1 => "writer", _ => { em { "other " (role) } } }
                @if let Some(n) = Some(role) { span { (n) } }
            }
        };
        assert!(live.part().slots().iter().all(|s| matches!(s, Slot::Part(_))));
    }
}

#[test]
fn live_html_renders_loops_as_lists_keyed_or_not() {
    let rows = rows();
    let live = same! {
        table {
            @for row in &rows {
                tr.done[row.done] { td { (row.id) } td { (row.name) } }
            }
        }
    };
    let [Slot::List(list)] = live.part().slots() else { panic!("{live:?}") };
    assert_eq!(list.items().len(), 3);
    assert!(!list.is_keyed());
    assert_eq!(list.statics().parts().len(), list.items()[0].slots().len() + 1);

    let keyed: Live<()> = live_html! {
        ul { @for row in &rows; key = row.id { li { (row.name) @if row.done { " ✓" } } } }
    };
    let unkeyed = html! { ul { @for row in &rows { li { (row.name) @if row.done { " ✓" } } } } };
    assert_eq!(keyed.to_html(), unkeyed.as_str());
    let [Slot::List(list)] = keyed.part().slots() else { panic!("{keyed:?}") };
    let keys: Vec<_> = list.items().iter().map(|i| i.key()).collect();
    assert_eq!(keys, [Some("7"), Some("3"), Some("9")]);
}

#[test]
fn live_html_keeps_let_in_scope_and_renders_documents_parts() {
    let items = ["a", "b"];
    let live = same! {
        section {
            @let count = items.len();
            h2 { (count) " items" }
            @for (i, item) in items.iter().enumerate() {
                @let n = i + 1;
                p { (n) ". " (item) }
            }
            pre { "x" }
            textarea name="t" { (count) }
        }
    };
    assert_eq!(live.part().slots().len(), 3);
}

#[test]
fn the_same_markup_has_the_same_fingerprint_and_other_markup_another() {
    let a = |n: u32| -> Live<()> {
        live_html! { p { (n) } }
    };
    let b: Live<()> = live_html! { p { "n" (1) } };
    assert_eq!(a(1).part().statics().fingerprint(), a(2).part().statics().fingerprint());
    assert_ne!(a(1).part().statics().fingerprint(), b.part().statics().fingerprint());
}

/// `@let` expanded to `let let ..` in `html!` and never compiled.
#[test]
fn html_let_binds_a_value_for_the_markup_after_it() {
    let names = ["ann", "bob"];
    let page = html! { ul { @let count = names.len(); @for name in names { li { (name) "/" (count) } } } };
    assert_eq!(page.as_str(), "<ul><li>ann/2</li><li>bob/2</li></ul>");
}
