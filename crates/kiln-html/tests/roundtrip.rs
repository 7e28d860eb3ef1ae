//! Property: a random well-typed tree, built from components written with `html!`,
//! renders to a document that an HTML5 parser (html5ever) reads back into the same
//! tree, with no parse error. The content models let through no nesting that the
//! parser would restructure, and escaping loses no text.

use std::rc::Rc;

use html5ever::tendril::TendrilSink;
use html5ever::{ParseOpts, parse_document};
use kiln_html::{Document, Flow, Fragment, Interactive, ListItem, Phrasing, SelectOption, TableCell, TableRow, html};
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use proptest::prelude::*;

/// Phrasing content with no interactive content.
#[derive(Debug, Clone)]
enum Inline {
    Text(String),
    Span(String, Vec<Inline>),
    Em(Vec<Inline>),
    Code(Vec<Inline>),
    Br,
}

/// Phrasing content, interactive or not.
#[derive(Debug, Clone)]
enum Phrase {
    Inline(Inline),
    Link(Vec<Inline>),
    Button(Vec<Inline>),
    Input(String),
    Select(Vec<String>),
}

#[derive(Debug, Clone)]
enum Block {
    Phrase(Phrase),
    Div(Vec<Block>),
    P(Vec<Phrase>),
    Ul(Vec<Vec<Block>>),
    Table(Vec<Vec<Vec<Block>>>),
    Pre(Vec<Inline>),
}

/// The tree the parser should build: element name, attributes, children.
#[derive(Debug, Clone, PartialEq)]
enum Dom {
    Element(String, Vec<(String, String)>, Vec<Dom>),
    Text(String),
}

fn text() -> impl Strategy<Value = String> {
    // Letters, spaces, the characters that need escaping, a quote, non-ASCII and a
    // newline; no CR or NUL, which the parser's input stream rewrites (§13.2.3.5).
    proptest::string::string_regex("[a-z <>&\"'é日\n]{0,12}").expect("regex")
}

fn inline() -> impl Strategy<Value = Inline> {
    let leaf = prop_oneof![text().prop_map(Inline::Text), Just(Inline::Br)];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (text(), prop::collection::vec(inner.clone(), 0..4)).prop_map(|(t, c)| Inline::Span(t, c)),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Inline::Em),
            prop::collection::vec(inner, 0..4).prop_map(Inline::Code),
        ]
    })
}

fn phrase() -> impl Strategy<Value = Phrase> {
    prop_oneof![
        4 => inline().prop_map(Phrase::Inline),
        1 => prop::collection::vec(inline(), 0..3).prop_map(Phrase::Link),
        1 => prop::collection::vec(inline(), 0..3).prop_map(Phrase::Button),
        1 => text().prop_map(Phrase::Input),
        1 => prop::collection::vec(text(), 0..3).prop_map(Phrase::Select),
    ]
}

fn block() -> impl Strategy<Value = Block> {
    let leaf = prop_oneof![
        phrase().prop_map(Block::Phrase),
        prop::collection::vec(phrase(), 0..4).prop_map(Block::P),
        prop::collection::vec(inline(), 0..3).prop_map(Block::Pre),
    ];
    leaf.prop_recursive(3, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Block::Div),
            prop::collection::vec(prop::collection::vec(inner.clone(), 0..3), 0..3).prop_map(Block::Ul),
            prop::collection::vec(prop::collection::vec(prop::collection::vec(inner, 0..2), 1..3), 0..3)
                .prop_map(Block::Table),
        ]
    })
}

// The components: each renders one node with `html!`, its category in its type.

fn render_inline(node: &Inline) -> Fragment<Phrasing> {
    match node {
        Inline::Text(t) => html! { (t) },
        Inline::Span(title, children) => html! { span title=(title) { @for c in children { (render_inline(c)) } } },
        Inline::Em(children) => html! { em { @for c in children { (render_inline(c)) } } },
        Inline::Code(children) => html! { code { @for c in children { (render_inline(c)) } } },
        Inline::Br => html! { br; },
    }
}

fn render_phrase(node: &Phrase) -> Fragment<Interactive> {
    match node {
        Phrase::Inline(inline) => render_inline(inline).into(),
        Phrase::Link(children) => html! { a href="#here" { @for c in children { (render_inline(c)) } } },
        Phrase::Button(children) => html! { button type="button" { @for c in children { (render_inline(c)) } } },
        Phrase::Input(value) => html! { input type="text" value=(value); },
        Phrase::Select(options) => html! { select { @for o in options { (render_option(o)) } } },
    }
}

fn render_option(text: &str) -> Fragment<SelectOption> {
    html! { option value=(text) { (text) } }
}

fn render_block(node: &Block) -> Fragment<Flow> {
    match node {
        Block::Phrase(phrase) => render_phrase(phrase).into(),
        Block::Div(children) => html! { div { @for c in children { (render_block(c)) } } },
        Block::P(children) => html! { p { @for c in children { (render_phrase(c)) } } },
        Block::Ul(items) => html! { ul { @for item in items { (render_item(item)) } } },
        Block::Table(rows) => html! { table { tbody { @for row in rows { (render_row(row)) } } } },
        Block::Pre(children) => html! { pre { @for c in children { (render_inline(c)) } } },
    }
}

fn render_item(children: &[Block]) -> Fragment<ListItem> {
    html! { li { @for c in children { (render_block(c)) } } }
}

fn render_row(cells: &[Vec<Block>]) -> Fragment<TableRow> {
    html! { tr { @for cell in cells { (render_cell(cell)) } } }
}

fn render_cell(children: &[Block]) -> Fragment<TableCell> {
    html! { td { @for c in children { (render_block(c)) } } }
}

fn page(blocks: &[Block]) -> Fragment<Document> {
    html! {
        html lang="en" {
            head { title { "roundtrip" } }
            body { @for b in blocks { (render_block(b)) } }
        }
    }
}

// The tree each node should parse into.

fn el(name: &str, attrs: &[(&str, &str)], children: Vec<Dom>) -> Dom {
    Dom::Element(name.into(), attrs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect(), children)
}

fn expect_inline(node: &Inline) -> Dom {
    match node {
        Inline::Text(t) => Dom::Text(t.clone()),
        Inline::Span(title, c) => el("span", &[("title", title)], c.iter().map(expect_inline).collect()),
        Inline::Em(c) => el("em", &[], c.iter().map(expect_inline).collect()),
        Inline::Code(c) => el("code", &[], c.iter().map(expect_inline).collect()),
        Inline::Br => el("br", &[], vec![]),
    }
}

fn expect_phrase(node: &Phrase) -> Dom {
    match node {
        Phrase::Inline(i) => expect_inline(i),
        Phrase::Link(c) => el("a", &[("href", "#here")], c.iter().map(expect_inline).collect()),
        Phrase::Button(c) => el("button", &[("type", "button")], c.iter().map(expect_inline).collect()),
        Phrase::Input(v) => el("input", &[("type", "text"), ("value", v)], vec![]),
        Phrase::Select(options) => el(
            "select",
            &[],
            options.iter().map(|o| el("option", &[("value", o)], vec![Dom::Text(o.clone())])).collect(),
        ),
    }
}

fn expect_block(node: &Block) -> Dom {
    match node {
        Block::Phrase(p) => expect_phrase(p),
        Block::Div(c) => el("div", &[], c.iter().map(expect_block).collect()),
        Block::P(c) => el("p", &[], c.iter().map(expect_phrase).collect()),
        Block::Ul(items) => {
            el("ul", &[], items.iter().map(|i| el("li", &[], i.iter().map(expect_block).collect())).collect())
        }
        Block::Table(rows) => el(
            "table",
            &[],
            vec![el(
                "tbody",
                &[],
                rows.iter()
                    .map(|r| {
                        el("tr", &[], r.iter().map(|c| el("td", &[], c.iter().map(expect_block).collect())).collect())
                    })
                    .collect(),
            )],
        ),
        Block::Pre(c) => el("pre", &[], c.iter().map(expect_inline).collect()),
    }
}

/// Merges adjacent text and drops empty text, as a parsed DOM has it.
fn normalize(nodes: Vec<Dom>) -> Vec<Dom> {
    let mut out: Vec<Dom> = Vec::new();
    for node in nodes {
        match node {
            Dom::Text(t) if t.is_empty() => {}
            Dom::Text(t) => match out.last_mut() {
                Some(Dom::Text(prev)) => prev.push_str(&t),
                _ => out.push(Dom::Text(t)),
            },
            Dom::Element(name, attrs, children) => out.push(Dom::Element(name, attrs, normalize(children))),
        }
    }
    out
}

fn from_parsed(handle: &Handle) -> Option<Dom> {
    match &handle.data {
        NodeData::Text { contents } => Some(Dom::Text(contents.borrow().to_string())),
        NodeData::Element { name, attrs, .. } => {
            let attrs = attrs.borrow().iter().map(|a| (a.name.local.to_string(), a.value.to_string())).collect();
            let children = handle.children.borrow().iter().filter_map(from_parsed).collect();
            Some(Dom::Element(name.local.to_string(), attrs, children))
        }
        _ => None,
    }
}

fn find(handle: &Handle, tag: &str) -> Option<Handle> {
    if let NodeData::Element { name, .. } = &handle.data {
        if &*name.local == tag {
            return Some(Rc::clone(handle));
        }
    }
    handle.children.borrow().iter().find_map(|c| find(c, tag))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn rendered_trees_parse_back_into_themselves(blocks in prop::collection::vec(block(), 0..5)) {
        let html = page(&blocks).into_string();
        let dom = parse_document(RcDom::default(), ParseOpts::default()).one(html.as_str());
        let errors = dom.errors.borrow().clone();
        prop_assert!(errors.is_empty(), "parse errors {errors:?} in {html}");
        let body = find(&dom.document, "body").expect("a body");
        let Some(Dom::Element(_, _, parsed)) = from_parsed(&body) else { unreachable!() };
        let expected = normalize(blocks.iter().map(expect_block).collect());
        prop_assert_eq!(normalize(parsed), expected, "{}", html);
    }
}
