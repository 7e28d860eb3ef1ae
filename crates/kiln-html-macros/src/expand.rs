//! The walk over the markup: each element checked against its parent's content model,
//! and the code that renders it.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::ast::{Element, Else, If, Node};
use crate::category::{Category, is_interactive};
use crate::model::{self, FLOW, METADATA, Model, PHRASING};
use crate::out::{Out, escape};

/// Where children are being checked.
#[derive(Clone)]
pub(crate) struct Ctx {
    /// The parent element, `None` at a fragment's top level.
    pub(crate) parent: Option<&'static str>,
    /// What the parent accepts (at the top level: what the fragment's category allows
    /// for splices).
    pub(crate) model: Model,
    /// The `<a>` or `<button>` this is inside: no interactive content here.
    pub(crate) inert: Option<&'static str>,
    /// Splices must hold no interactive content: inside `<a>`/`<button>`, or in a
    /// fragment of category `Phrasing`, which may go inside them.
    pub(crate) inert_splices: bool,
    /// Elements forbidden anywhere below, with the ancestor that forbids them.
    pub(crate) forbidden: Vec<(&'static str, &'static str)>,
}

pub(crate) struct Expander {
    pub(crate) rt: TokenStream,
    pub(crate) buf: Ident,
    pub(crate) errors: Vec<syn::Error>,
    /// `live_html!`: conditionals and loops become nested slots (`live.rs`).
    pub(crate) live: Option<crate::mode::Mode>,
}

impl Expander {
    pub(crate) fn error(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub(crate) fn nodes(&mut self, nodes: &[Node], ctx: &Ctx, out: &mut Out) {
        for node in nodes {
            self.node(node, ctx, out);
        }
    }

    pub(crate) fn block(&mut self, nodes: &[Node], ctx: &Ctx) -> TokenStream {
        let mut out = Out::default();
        self.nodes(nodes, ctx, &mut out);
        out.finish(&self.buf)
    }

    fn node(&mut self, node: &Node, ctx: &Ctx, out: &mut Out) {
        match node {
            Node::Text(lit) => self.text(lit, ctx, out),
            Node::Splice(expr, span) => match splice_fn(ctx) {
                Some(f) => {
                    let (rt, buf) = (&self.rt, &self.buf);
                    let f = format_ident!("{}", f, span = *span);
                    let parent = format_ident!("{}", ctx.parent.unwrap_or("fragment"), span = *span);
                    out.push_code(quote_spanned!(*span=> #rt::#f::<#rt::el::#parent, _>(&(#expr), #buf);));
                }
                None => {
                    let parent = ctx.parent.unwrap_or("html");
                    let accepts = ctx.model.describe();
                    self.error(*span, format!("`<{parent}>` takes no splices: it accepts {accepts}"));
                }
            },
            Node::Element(e) => self.element(e, ctx, out),
            Node::If(i) if self.splits() => {
                let slot = self.live_if(i, ctx);
                out.push_slot(slot);
            }
            Node::For { pat, expr, key, body, .. } if self.splits() => {
                let slot = self.live_for(pat, expr, key.as_deref(), body, ctx);
                out.push_slot(slot);
            }
            Node::Match { expr, arms, .. } if self.splits() => {
                let slot = self.live_match(expr, arms, ctx);
                out.push_slot(slot);
            }
            Node::If(i) => {
                let code = self.if_chain(i, ctx);
                out.push_code(code);
            }
            Node::For { pat, expr, key, body, .. } => {
                let body = self.block(body, ctx);
                // The key is not rendered, only checked: a binding used by it alone is used.
                let key = key.as_ref().map(|key| quote!(if false { let _ = &(#key); }));
                out.push_code(quote!(for #pat in #expr { #key #body }));
            }
            Node::Match { expr, arms, .. } => {
                let arms: Vec<_> = arms
                    .iter()
                    .map(|arm| {
                        let pat = &arm.pat;
                        let guard = arm.guard.as_ref().map(|g| quote!(if #g));
                        let body = self.block(&arm.body, ctx);
                        quote!(#pat #guard => { #body })
                    })
                    .collect();
                out.push_code(quote!(match #expr { #(#arms)* }));
            }
            // The tokens hold the `let` itself.
            Node::Let(tokens) => out.push_let(quote!(#tokens;)),
        }
    }

    fn if_chain(&mut self, i: &If, ctx: &Ctx) -> TokenStream {
        let cond = &i.cond;
        let then = self.block(&i.then, ctx);
        let otherwise = match &i.otherwise {
            None => quote!(),
            Some(Else::If(next)) => {
                let next = self.if_chain(next, ctx);
                quote!(else #next)
            }
            Some(Else::Block(nodes)) => {
                let block = self.block(nodes, ctx);
                quote!(else { #block })
            }
        };
        quote!(if #cond { #then } #otherwise)
    }

    fn text(&mut self, lit: &syn::LitStr, ctx: &Ctx, out: &mut Out) {
        let text = lit.value();
        if ctx.model == Model::RawText {
            let parent = ctx.parent.unwrap_or("script");
            if text.to_ascii_lowercase().contains(&format!("</{parent}")) {
                self.error(
                    lit.span(),
                    format!("the text of `<{parent}>` is not escaped and cannot contain `</{parent}`"),
                );
            }
            out.push_static(&text);
        } else if ctx.model.takes_text() {
            out.push_static(&escape(&text));
        } else {
            let parent = ctx.parent.unwrap_or("html");
            let accepts = ctx.model.describe();
            self.error(lit.span(), format!("`<{parent}>` does not accept text: it accepts {accepts}"));
        }
    }

    fn element(&mut self, e: &Element, ctx: &Ctx, out: &mut Out) {
        let Some(info) = model::element(&e.name) else {
            self.error(e.span, format!("unknown element `<{}>`: kiln-html knows the elements of the HTML standard's §4.1-§4.11 that sites use", e.name));
            return;
        };
        let mut misplaced = false;
        if ctx.parent.is_some() {
            if let Err(message) = accepts(ctx, info) {
                self.error(e.span, message);
                misplaced = true;
            }
        }
        for (name, ancestor) in &ctx.forbidden {
            if *name == info.name {
                self.error(e.span, format!("`<{name}>` cannot be inside `<{ancestor}>`, at any depth"));
            }
        }
        if let Some(ancestor) = ctx.inert {
            if is_interactive(e, info) {
                self.error(
                    e.span,
                    format!("`<{}>` is interactive content, which is not allowed inside `<{ancestor}>`", info.name),
                );
            }
        }
        match (&e.body, info.model) {
            (Some(_), Model::Void) => self
                .error(e.span, format!("`<{}>` is a void element: it takes no children; end it with `;`", info.name)),
            (None, model) if model != Model::Void => self.error(
                e.body_span,
                format!("`<{}>` is not a void element: give it its children in `{{ .. }}`", info.name),
            ),
            _ => {}
        }

        if info.name == "html" {
            out.push_static("<!DOCTYPE html>");
        }
        out.push_static("<");
        out.push_static(info.name);
        self.attributes(e, info, out);
        out.push_static(">");
        if matches!(info.name, "pre" | "textarea") {
            // The parser drops one newline right after these start tags (§13.2.6.4.7),
            // so a leading newline of the content would vanish without this one.
            out.push_static("\n");
        }
        let Some(body) = &e.body else { return };
        if info.model == Model::Void {
            return;
        }
        let mut child = ctx.clone();
        child.parent = Some(info.name);
        child.model = match info.model {
            Model::Transparent if ctx.model == Model::Phrasing => Model::Phrasing,
            Model::Transparent => Model::Flow,
            Model::Flow if info.name == "div" && ctx.model == Model::Dl => Model::Dl,
            model => model,
        };
        if matches!(info.name, "a" | "button") {
            child.inert = Some(info.name);
            child.inert_splices = true;
        }
        child.forbidden.extend(model::forbidden_descendants(info.name).iter().map(|name| (*name, info.name)));
        if !misplaced {
            crate::sequence::check(&mut self.errors, e, child.model, body);
        }
        self.nodes(body, &child, out);
        out.push_static("</");
        out.push_static(info.name);
        out.push_static(">");
    }
}

/// Whether `info` may be a child where `ctx` is, or the message saying why not.
fn accepts(ctx: &Ctx, info: &model::Element) -> Result<(), String> {
    let name = info.name;
    let ok = match ctx.model {
        Model::Flow => info.kinds & FLOW != 0,
        Model::Details => info.kinds & FLOW != 0 || name == "summary",
        Model::Figure => info.kinds & FLOW != 0 || name == "figcaption",
        Model::Fieldset => info.kinds & FLOW != 0 || name == "legend",
        Model::Phrasing | Model::Transparent => info.kinds & PHRASING != 0,
        Model::Void | Model::Text | Model::RawText => false,
        Model::Html => matches!(name, "head" | "body"),
        Model::Head => info.kinds & METADATA != 0,
        Model::List => name == "li",
        Model::Table => matches!(name, "caption" | "colgroup" | "thead" | "tbody" | "tr" | "tfoot"),
        Model::TableRows => name == "tr",
        Model::Row => matches!(name, "td" | "th"),
        Model::Colgroup => name == "col",
        Model::Select => matches!(name, "option" | "optgroup" | "hr"),
        Model::Options => name == "option",
        Model::Dl => matches!(name, "dt" | "dd" | "div"),
    };
    if ok {
        return Ok(());
    }
    let parent = ctx.parent.unwrap_or("html");
    let mut message =
        format!("`<{name}>` is not allowed in `<{parent}>`: `<{parent}>` accepts {}", ctx.model.describe());
    if let Some(places) = info.only_in {
        message.push_str(&format!("; `<{name}>` is only allowed in {places}"));
    } else if ctx.model == Model::Phrasing && info.kinds & FLOW != 0 {
        message.push_str(&format!(", and `<{name}>` is flow content"));
    }
    Err(message)
}

/// The runtime function that checks and renders a splice where `ctx` is.
fn splice_fn(ctx: &Ctx) -> Option<&'static str> {
    Some(match ctx.model {
        Model::Flow | Model::Details | Model::Figure | Model::Fieldset | Model::Transparent if ctx.inert_splices => {
            "in_inert"
        }
        Model::Flow | Model::Details | Model::Figure | Model::Fieldset | Model::Transparent => "in_flow",
        Model::Phrasing if ctx.inert_splices => "in_inert",
        Model::Phrasing => "in_phrasing",
        Model::Text => "in_text",
        Model::RawText => "in_raw_text",
        Model::List => "in_list",
        Model::Table | Model::TableRows => "in_table_rows",
        Model::Row => "in_table_row",
        Model::Select | Model::Options => "in_select",
        Model::Head => "in_head",
        Model::Html | Model::Colgroup | Model::Dl | Model::Void => return None,
    })
}

/// The context of a fragment's top level, given its category.
pub(crate) fn top_level(category: Category) -> Ctx {
    let (model, inert_splices) = match category {
        Category::Phrasing => (Model::Phrasing, true),
        Category::Interactive => (Model::Phrasing, false),
        Category::Flow => (Model::Flow, false),
        Category::ListItem => (Model::List, false),
        Category::TableRow => (Model::TableRows, false),
        Category::TableCell => (Model::Row, false),
        Category::SelectOption => (Model::Select, false),
        Category::Metadata => (Model::Head, false),
        Category::Document => (Model::Html, false),
    };
    Ctx { parent: None, model, inert: None, inert_splices, forbidden: Vec::new() }
}
