//! `live_html!`: the markup of a live view, checked as `html!` checks it, compiled to
//! its static parts (fingerprinted at compile time) and the slots that change.
//!
//! The walk is `html!`'s own ([`Expander`]); only the way its pieces are put together
//! differs. A run of code between two statics is one text slot, rendered into a
//! string of its own; `@if`, `@match` and `@for` holding markup are nested slots: a
//! part (a branch's statics and slots) or a list (the body's statics once, the slots
//! of each item, and each item's key when the loop names one). The same markup is also
//! expanded as `html!` expands it, into a string (events still checked): `Live::direct`
//! takes that way for a page's first answer, which needs only the HTML.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Pat, bracketed};

use crate::ast::{self, Arm, Else, If, Node};
use crate::category::{self, Category};
use crate::expand::{Ctx, Expander};
use crate::mode::Mode;
use crate::out::{Out, Piece};

/// Events sent with their value, which the markup gives (`on:click=(Event::Open(id))`).
const VALUE_EVENTS: &[&str] = &["click", "keydown", "keyup", "focus", "blur"];
/// Events sent with the fields of the form they belong to, decoded into the payload
/// of the variant the markup names (`on:submit=(Event::Save)`).
const FORM_EVENTS: &[&str] = &["submit", "change", "input"];

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let (rt, events, nodes) = parse(input)?;
    let category = category::of(&nodes)?;
    if !matches!(category, Category::Flow | Category::Phrasing | Category::Interactive) {
        let span = nodes.first().map_or_else(Span::call_site, Node::span);
        return Err(syn::Error::new(
            span,
            format!("a live view renders flow content (it is placed in a `<div>`), not {}", category.type_name()),
        ));
    }
    let events = events.then(|| format_ident!("__kiln_events", span = Span::mixed_site()));
    let buf = format_ident!("__kiln_html", span = Span::mixed_site());
    let slots = format_ident!("__kiln_slots", span = Span::mixed_site());
    let top = crate::expand::top_level(category);
    let mode = Mode { events: events.clone(), slots: Some(slots) };
    let mut expander = Expander { rt: rt.clone(), buf: buf.clone(), errors: Vec::new(), live: Some(mode) };
    let Block { statics, slots } = expander.live_block(&nodes, &top);
    let (statics, name) = expander.statics(&statics);
    take_errors(&mut expander)?;
    // The same markup again, written straight into a string as `html!` writes it: a
    // page's first answer needs only its HTML, not the slots the socket diffs.
    expander.live = Some(Mode { events: events.clone(), slots: None });
    let mut out = Out::default();
    expander.nodes(&nodes, &top, &mut out);
    take_errors(&mut expander)?;
    let capacity = out.static_len();
    let html = out.finish(&buf);
    let events = events.unwrap_or_else(|| format_ident!("__kiln_events", span = Span::mixed_site()));
    let (hint, direct) = (
        format_ident!("__KILN_SIZE_HINT", span = Span::mixed_site()),
        format_ident!("__kiln_direct", span = Span::mixed_site()),
    );
    // The event type comes from what the caller expects (`Live<Self::Event>`) before
    // the markup is checked, so an event of another type is reported at the event.
    // One closure for both ways, so that the markup may consume what it iterates.
    Ok(quote!({
        #statics
        static #hint: #rt::SizeHint = #rt::SizeHint::new();
        #rt::Live::__build(&#name, |#events, #direct: ::core::option::Option<&mut ::std::string::String>| {
            let _ = #events;
            match #direct {
                ::core::option::Option::Some(#buf) => {
                    #buf.reserve(#hint.get(#capacity));
                    #html
                    #hint.record(#buf.len());
                    ::core::option::Option::None
                }
                ::core::option::Option::None => ::core::option::Option::Some(#rt::Part::new(&#name, #slots)),
            }
        })
    }))
}

/// The errors the expander has collected, as one.
fn take_errors(expander: &mut Expander) -> syn::Result<()> {
    let mut errors = std::mem::take(&mut expander.errors).into_iter();
    match errors.next() {
        Some(mut first) => {
            errors.for_each(|e| first.combine(e));
            Err(first)
        }
        None => Ok(()),
    }
}

/// The macro's input: `[runtime path] [events] markup…` or `[runtime path] [] markup…`.
fn parse(tokens: TokenStream) -> syn::Result<(TokenStream, bool, Vec<Node>)> {
    let parser = |input: ParseStream<'_>| {
        let rt;
        bracketed!(rt in input);
        let rt: TokenStream = rt.parse()?;
        let flag;
        bracketed!(flag in input);
        let events = !flag.is_empty();
        flag.parse::<TokenStream>()?;
        Ok((rt, events, crate::parse::nodes(input)?))
    };
    parser.parse2(tokens)
}

/// One block's statics and the expression building its slots.
struct Block {
    statics: Vec<String>,
    slots: TokenStream,
}

impl Expander {
    /// Whether conditionals and loops become nested slots: in the live expansion, not
    /// in `html!`'s nor in the live markup written straight into a string.
    pub(crate) fn splits(&self) -> bool {
        self.live.as_ref().is_some_and(|mode| mode.slots.is_some())
    }

    fn live_block(&mut self, nodes: &[Node], ctx: &Ctx) -> Block {
        let mut out = Out::default();
        self.nodes(nodes, ctx, &mut out);
        let slots = self.live.as_ref().and_then(|mode| mode.slots.clone()).expect("the live expansion's slots");
        let (rt, buf) = (self.rt.clone(), self.buf.clone());
        let mut statics = vec![String::new()];
        let mut statements = Vec::new();
        let mut text: Vec<TokenStream> = Vec::new();
        let close = |text: &mut Vec<TokenStream>, statements: &mut Vec<TokenStream>, statics: &mut Vec<String>| {
            if text.is_empty() {
                return;
            }
            let code = std::mem::take(text);
            statements.push(quote!({
                let mut #buf = ::std::string::String::new();
                {
                    let #buf = &mut #buf;
                    #(#code)*
                }
                #slots.push(#rt::Slot::Text(#buf));
            }));
            statics.push(String::new());
        };
        for piece in out.into_pieces() {
            match piece {
                Piece::Static(s) => {
                    close(&mut text, &mut statements, &mut statics);
                    statics.last_mut().expect("one static at least").push_str(&s);
                }
                Piece::Code(code) => text.push(code),
                Piece::Let(code) => {
                    close(&mut text, &mut statements, &mut statics);
                    statements.push(code);
                }
                Piece::Slot(slot) => {
                    close(&mut text, &mut statements, &mut statics);
                    statements.push(quote!(#slots.push(#slot);));
                    statics.push(String::new());
                }
            }
        }
        close(&mut text, &mut statements, &mut statics);
        let count = statics.len() - 1;
        let slots = quote!({
            let mut #slots = ::std::vec::Vec::with_capacity(#count);
            #(#statements)*
            #slots
        });
        Block { statics, slots }
    }

    /// A block as a `Part` expression: its statics in a `static`, its slots built.
    fn live_part(&mut self, nodes: &[Node], ctx: &Ctx) -> TokenStream {
        let Block { statics, slots } = self.live_block(nodes, ctx);
        let (statics, name) = self.statics(&statics);
        let rt = &self.rt;
        quote!({
            #statics
            #rt::Part::new(&#name, #slots)
        })
    }

    /// The `static` holding a block's statics, and its name; `Statics::new` is a
    /// `const fn`, so the fingerprint is computed as the program compiles.
    fn statics(&self, statics: &[String]) -> (TokenStream, Ident) {
        let rt = &self.rt;
        let name = format_ident!("__KILN_STATICS", span = Span::mixed_site());
        (quote!(static #name: #rt::Statics = #rt::Statics::new(&[#(#statics),*]);), name)
    }

    pub(crate) fn live_if(&mut self, i: &If, ctx: &Ctx) -> TokenStream {
        let chain = self.live_if_chain(i, ctx);
        let rt = &self.rt;
        quote!(#rt::Slot::Part(#chain))
    }

    fn live_if_chain(&mut self, i: &If, ctx: &Ctx) -> TokenStream {
        let cond = &i.cond;
        let then = self.live_part(&i.then, ctx);
        let otherwise = match &i.otherwise {
            None => {
                let rt = &self.rt;
                quote!(else { #rt::Part::empty() })
            }
            Some(Else::If(next)) => {
                let next = self.live_if_chain(next, ctx);
                quote!(else #next)
            }
            Some(Else::Block(nodes)) => {
                let part = self.live_part(nodes, ctx);
                quote!(else #part)
            }
        };
        quote!(if #cond #then #otherwise)
    }

    pub(crate) fn live_match(&mut self, expr: &Expr, arms: &[Arm], ctx: &Ctx) -> TokenStream {
        let arms: Vec<_> = arms
            .iter()
            .map(|arm| {
                let pat = &arm.pat;
                let guard = arm.guard.as_ref().map(|g| quote!(if #g));
                let part = self.live_part(&arm.body, ctx);
                quote!(#pat #guard => #part)
            })
            .collect();
        let rt = &self.rt;
        quote!(#rt::Slot::Part(match #expr { #(#arms)* }))
    }

    pub(crate) fn live_for(
        &mut self,
        pat: &Pat,
        expr: &Expr,
        key: Option<&Expr>,
        body: &[Node],
        ctx: &Ctx,
    ) -> TokenStream {
        let Block { statics, slots } = self.live_block(body, ctx);
        let (statics, name) = self.statics(&statics);
        let rt = &self.rt;
        let item_key = format_ident!("__kiln_key", span = Span::mixed_site());
        let items = format_ident!("__kiln_items", span = Span::mixed_site());
        let key = match key {
            Some(key) => quote_spanned!(key.span()=> ::core::option::Option::Some(#rt::key(&(#key)))),
            None => quote!(::core::option::Option::None),
        };
        quote!({
            #statics
            let mut #items = ::std::vec::Vec::new();
            for #pat in #expr {
                let #item_key = #key;
                #items.push(#rt::Item::new(#item_key, #slots));
            }
            #rt::Slot::List(#rt::List::new(&#name, #items))
        })
    }

    /// `on:event=(..)`: the event, checked against the view's event type, as a
    /// `data-kiln-event` attribute the client reads.
    pub(crate) fn event(&mut self, event: &str, attr: &ast::Attr, out: &mut Out) {
        let Some(events) = self.live.as_ref().and_then(|mode| mode.events.clone()) else {
            let message = if self.live.is_some() {
                format!("`on:{event}` names an event of a live view: write the view with `kiln::live_html!`")
            } else {
                format!("`on:{event}` names an event of a live view: it is for `kiln::live_html!`, not `html!`")
            };
            self.error(attr.span, message);
            return;
        };
        let ast::AttrValue::Expr(expr) = &attr.value else {
            self.error(attr.span, format!("`on:{event}` takes the event as a value: `on:{event}=(Event::Variant)`"));
            return;
        };
        let (rt, buf) = (self.rt.clone(), self.buf.clone());
        if VALUE_EVENTS.contains(&event) {
            out.push_static(&format!(" data-kiln-{event}=\""));
            out.push_code(quote_spanned!(expr.span()=> #rt::event_value(#events, &(#expr), #buf);));
            out.push_static("\"");
        } else if FORM_EVENTS.contains(&event) {
            let Expr::Path(path) = expr else {
                self.error(
                    expr.span(),
                    format!("`on:{event}` names the variant that takes the form's fields: `on:{event}=(Event::Save)`, with `Save(T)` and `T: Deserialize`"),
                );
                return;
            };
            let Some(variant) = path.path.segments.last() else { return };
            let variant = variant.ident.to_string();
            out.push_static(&format!(" data-kiln-{event}=\"{variant}\""));
            out.push_let(quote_spanned!(expr.span()=> #rt::event_form(#events, #expr as fn(_) -> _);));
        } else {
            let known: Vec<String> = VALUE_EVENTS.iter().chain(FORM_EVENTS).map(|e| format!("`on:{e}`")).collect();
            self.error(attr.span, format!("unknown event `on:{event}`: a live view handles {}", known.join(", ")));
        }
    }
}
