//! Content models that fix the order or the number of children: `<html>`, `<head>`,
//! `<table>`, `<dl>`, `<details>`, `<figure>`, `<fieldset>`.

use proc_macro2::Span;

use crate::ast::{Element, Else, Node};
use crate::model::Model;

/// The errors of one `html!` call, which the expander reports together.
type Errors = Vec<syn::Error>;

fn error(errors: &mut Errors, span: Span, message: impl std::fmt::Display) {
    errors.push(syn::Error::new(span, message));
}

/// A child as the order checks see it.
struct Item<'a> {
    /// The element's name; `"(splice)"` or `"(text)"` otherwise.
    name: &'a str,
    span: Span,
    /// Under `@if`, `@match` or `@for`: present zero or more times.
    conditional: bool,
    /// Under `@for`: possibly repeated.
    repeated: bool,
}

fn flatten<'a>(nodes: &'a [Node], conditional: bool, repeated: bool, items: &mut Vec<Item<'a>>) {
    for node in nodes {
        match node {
            Node::Element(e) => items.push(Item { name: &e.name, span: e.span, conditional, repeated }),
            Node::Text(lit) => items.push(Item { name: "(text)", span: lit.span(), conditional, repeated }),
            Node::Splice(_, span) => items.push(Item { name: "(splice)", span: *span, conditional, repeated }),
            Node::If(i) => {
                let mut branch = Some(i);
                while let Some(i) = branch {
                    flatten(&i.then, true, repeated, items);
                    branch = match &i.otherwise {
                        Some(Else::If(next)) => Some(next),
                        Some(Else::Block(nodes)) => {
                            flatten(nodes, true, repeated, items);
                            None
                        }
                        None => None,
                    };
                }
            }
            Node::For { body, .. } => flatten(body, true, true, items),
            Node::Match { arms, .. } => arms.iter().for_each(|arm| flatten(&arm.body, true, repeated, items)),
            Node::Let(_) => {}
        }
    }
}

/// Checks the order and number of `e`'s children, whose content model is `model`.
pub(crate) fn check(x: &mut Errors, e: &Element, model: Model, body: &[Node]) {
    let mut items = Vec::new();
    flatten(body, false, false, &mut items);
    match model {
        Model::Html => html(x, e, &items),
        Model::Head => head(x, e, &items),
        Model::Table => table(x, &items),
        Model::Dl => dl(x, e, &items),
        Model::Details => first_only(x, e, &items, "summary", true),
        Model::Fieldset => first_only(x, e, &items, "legend", false),
        Model::Figure => figure(x, &items),
        _ => {}
    }
}

fn html(x: &mut Errors, e: &Element, items: &[Item<'_>]) {
    let names: Vec<&str> = items.iter().map(|i| i.name).collect();
    for item in items.iter().filter(|i| i.conditional) {
        error(
            x,
            item.span,
            format!("`<{}>` must be written directly in `<html>`, not under `@if`, `@for` or `@match`", item.name),
        );
    }
    if names != ["head", "body"] {
        let span = items.iter().zip(["head", "body"]).find(|(i, want)| i.name != *want).map_or(e.span, |(i, _)| i.span);
        error(x, span, "`<html>` accepts `<head>` then `<body>`, each exactly once");
    }
}

fn head(x: &mut Errors, e: &Element, items: &[Item<'_>]) {
    let titles: Vec<&Item<'_>> = items.iter().filter(|i| i.name == "title").collect();
    for title in &titles {
        if title.conditional {
            error(
                x,
                title.span,
                "`<title>` must be written directly in `<head>`, exactly once: not under `@if`, `@for` or `@match`",
            );
        }
    }
    match titles.as_slice() {
        [] => error(x, e.span, "`<head>` needs exactly one `<title>`"),
        [_] => {}
        [_, second, ..] => error(x, second.span, "`<head>` takes exactly one `<title>`; this is a second one"),
    }
    let bases: Vec<&Item<'_>> = items.iter().filter(|i| i.name == "base").collect();
    if let Some(base) = bases.get(1).or(bases.iter().find(|b| b.repeated)) {
        error(x, base.span, "`<head>` takes at most one `<base>`");
    }
}

/// `<caption>`?, `<colgroup>`*, `<thead>`?, (`<tbody>`* | `<tr>`+), `<tfoot>`? (§4.9.1).
fn table(x: &mut Errors, items: &[Item<'_>]) {
    let phase = |name: &str| match name {
        "caption" => 0,
        "colgroup" => 1,
        "thead" => 2,
        "tbody" | "tr" | "(splice)" => 3,
        _ => 4,
    };
    let mut reached = 0;
    let mut seen_once: Vec<&str> = Vec::new();
    for item in items.iter().filter(|i| i.name != "(text)") {
        let p = phase(item.name);
        if p < reached {
            error(
                x,
                item.span,
                format!(
                    "`<{}>` is out of order: `<table>` accepts `<caption>`, `<colgroup>`, `<thead>`, `<tbody>` or `<tr>`, `<tfoot>`, in that order",
                    item.name
                ),
            );
        }
        reached = reached.max(p);
        if matches!(item.name, "caption" | "thead" | "tfoot") {
            if item.repeated || seen_once.contains(&item.name) {
                error(x, item.span, format!("`<table>` takes at most one `<{}>`", item.name));
            }
            seen_once.push(item.name);
        }
    }
    let tbody = items.iter().find(|i| i.name == "tbody");
    let tr = items.iter().find(|i| i.name == "tr" || i.name == "(splice)");
    if let (Some(_), Some(tr)) = (tbody, tr) {
        error(x, tr.span, "`<table>` takes `<tbody>` elements or `<tr>` elements directly, not both");
    }
}

/// Groups of one or more `<dt>` followed by one or more `<dd>` (§4.4.9).
fn dl(x: &mut Errors, e: &Element, items: &[Item<'_>]) {
    let terms: Vec<&Item<'_>> = items.iter().filter(|i| i.name == "dt" || i.name == "dd").collect();
    if let Some(first) = terms.first() {
        if first.name != "dt" {
            error(
                x,
                first.span,
                format!("in `<{}>`, each group starts with `<dt>`: this `<dd>` has no `<dt>` before it", e.name),
            );
        }
    }
    if let Some(last) = terms.last() {
        if last.name != "dd" {
            error(
                x,
                last.span,
                format!("in `<{}>`, each group ends with `<dd>`: this `<dt>` has no `<dd>` after it", e.name),
            );
        }
    }
}

/// `<summary>` first in `<details>` (required), `<legend>` first in `<fieldset>` (optional).
fn first_only(x: &mut Errors, e: &Element, items: &[Item<'_>], first: &str, required: bool) {
    for (i, item) in items.iter().enumerate() {
        if item.name == first && (i != 0 || item.conditional) {
            error(
                x,
                item.span,
                format!("`<{first}>` must be the first child of `<{}>`, written directly in it", e.name),
            );
        }
    }
    if required && items.first().is_none_or(|i| i.name != first) {
        error(x, e.span, format!("`<{}>` needs a `<{first}>` as its first child", e.name));
    }
}

/// At most one `<figcaption>`, first or last (§4.4.12).
fn figure(x: &mut Errors, items: &[Item<'_>]) {
    let last = items.len().saturating_sub(1);
    let mut seen = false;
    for (i, item) in items.iter().enumerate() {
        if item.name != "figcaption" {
            continue;
        }
        if seen || item.repeated {
            error(x, item.span, "`<figure>` takes at most one `<figcaption>`");
        } else if i != 0 && i != last {
            error(x, item.span, "`<figcaption>` must be the first or the last child of `<figure>`");
        }
        seen = true;
    }
}
