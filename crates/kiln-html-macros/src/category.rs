//! A fragment's content category, from the elements written at its top level.

use proc_macro2::Span;

use crate::ast::{Element, Else, Node};
use crate::model::{self, FLOW, INTERACTIVE, PHRASING};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Category {
    Phrasing,
    Interactive,
    Flow,
    ListItem,
    TableRow,
    TableCell,
    SelectOption,
    Metadata,
    Document,
}

impl Category {
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            Category::Phrasing => "Phrasing",
            Category::Interactive => "Interactive",
            Category::Flow => "Flow",
            Category::ListItem => "ListItem",
            Category::TableRow => "TableRow",
            Category::TableCell => "TableCell",
            Category::SelectOption => "SelectOption",
            Category::Metadata => "Metadata",
            Category::Document => "Document",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Category::Phrasing | Category::Interactive => "phrasing content",
            Category::Flow => "flow content",
            Category::ListItem => "list items",
            Category::TableRow => "table rows",
            Category::TableCell => "table cells",
            Category::SelectOption => "options",
            Category::Metadata => "metadata",
            Category::Document => "a document",
        }
    }

    /// Phrasing within interactive within flow; the other categories only with themselves.
    fn join(self, other: Category) -> Option<Category> {
        use Category::*;
        match (self, other) {
            (a, b) if a == b => Some(a),
            (Phrasing, Interactive) | (Interactive, Phrasing) => Some(Interactive),
            (Phrasing | Interactive | Flow, Phrasing | Interactive | Flow) => Some(Flow),
            _ => None,
        }
    }
}

/// The category of a fragment whose top level is `nodes`, or the error to report.
pub(crate) fn of(nodes: &[Node]) -> Result<Category, syn::Error> {
    let mut top = Vec::new();
    flatten(nodes, &mut top);
    let mut category: Option<(Category, Span, String)> = None;
    for node in top {
        let (this, what) = match node {
            Node::Element(e) => {
                let Some(info) = model::element(&e.name) else { continue };
                (element(e, info)?, format!("`<{}>`", e.name))
            }
            Node::Text(_) => (Category::Phrasing, "text".to_owned()),
            _ => continue,
        };
        category = match category {
            None => Some((this, node.span(), what)),
            Some((so_far, first_span, first)) => match so_far.join(this) {
                Some(joined) => Some((joined, first_span, first)),
                None => {
                    return Err(syn::Error::new(
                        node.span(),
                        format!(
                            "a fragment holds one kind of content: {what} ({}) cannot stand beside {first} ({})",
                            this.describe(),
                            so_far.describe()
                        ),
                    ));
                }
            },
        };
    }
    Ok(category.map_or(Category::Phrasing, |(c, _, _)| c))
}

/// The nodes at the top level, through `@if`, `@for` and `@match`.
fn flatten<'a>(nodes: &'a [Node], top: &mut Vec<&'a Node>) {
    for node in nodes {
        match node {
            Node::If(i) => {
                let mut branch = Some(i);
                while let Some(i) = branch {
                    flatten(&i.then, top);
                    branch = match &i.otherwise {
                        Some(Else::If(next)) => Some(next),
                        Some(Else::Block(nodes)) => {
                            flatten(nodes, top);
                            None
                        }
                        None => None,
                    };
                }
            }
            Node::For { body, .. } => flatten(body, top),
            Node::Match { arms, .. } => arms.iter().for_each(|arm| flatten(&arm.body, top)),
            node => top.push(node),
        }
    }
}

fn element(e: &crate::ast::Element, info: &model::Element) -> Result<Category, syn::Error> {
    Ok(match info.name {
        "html" => Category::Document,
        "li" => Category::ListItem,
        "tr" => Category::TableRow,
        "td" | "th" => Category::TableCell,
        "option" | "optgroup" => Category::SelectOption,
        "meta" | "link" | "style" => Category::Metadata,
        name if info.kinds & (FLOW | PHRASING) == 0 => {
            let places = info.only_in.unwrap_or("its parent");
            return Err(syn::Error::new(
                e.span,
                format!("`<{name}>` cannot be a fragment's top level: it is only allowed in {places}"),
            ));
        }
        _ if info.kinds & PHRASING == 0 || has_flow_child(e) => Category::Flow,
        _ if is_interactive(e, info) || has_interactive(e) => Category::Interactive,
        _ => Category::Phrasing,
    })
}

fn children(e: &crate::ast::Element) -> Vec<&crate::ast::Element> {
    let mut nodes = Vec::new();
    flatten(e.body.as_deref().unwrap_or_default(), &mut nodes);
    nodes.into_iter().filter_map(|n| if let Node::Element(c) = n { Some(c) } else { None }).collect()
}

/// An `<a>` holding flow content is flow content itself.
fn has_flow_child(e: &crate::ast::Element) -> bool {
    children(e).into_iter().any(|c| model::element(&c.name).is_some_and(|info| info.kinds & PHRASING == 0))
}

fn has_interactive(e: &crate::ast::Element) -> bool {
    children(e)
        .into_iter()
        .any(|c| model::element(&c.name).is_some_and(|info| is_interactive(c, info)) || has_interactive(c))
}

/// Interactive content (§3.2.5.2.7) among the elements kiln-html knows; `<input
/// type="hidden">` is not.
pub(crate) fn is_interactive(e: &Element, info: &model::Element) -> bool {
    if info.kinds & INTERACTIVE == 0 {
        return false;
    }
    let hidden_input = info.name == "input"
        && e.attrs.iter().any(|a| {
            a.name == "type" && matches!(&a.value, crate::ast::AttrValue::Literal(lit) if lit.value() == "hidden")
        });
    !hidden_input
}
