//! The `html!` macro of kiln-html: maud's syntax, checked against the HTML Living
//! Standard's content models, expanded into pushes of merged static strings.
//!
//! Use it through `kiln_html::html!` or `kiln::html!`, which name the runtime it
//! expands to.

mod ast;
mod attrs;
mod category;
mod expand;
mod live;
mod mode;
mod model;
mod out;
mod parse;
mod sequence;

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::{format_ident, quote};

use crate::expand::Expander;
use crate::out::Out;

/// `html_in! { [runtime path] markup… }`: the markup rendered into a `Fragment` of the
/// category its top level decides, through the runtime at the given path.
#[proc_macro]
pub fn html_in(input: TokenStream) -> TokenStream {
    expand(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// `live_html_in! { [runtime path] [events] markup… }`: the markup as a live view's
/// `Live`: its static parts, fingerprinted at compile time, and the slots that change,
/// nested where `@if`, `@match` and `@for` hold markup. `[events]` lets `on:event`
/// attributes name the view's events (kiln's runtime has them); `[]` refuses them.
#[proc_macro]
pub fn live_html_in(input: TokenStream) -> TokenStream {
    live::expand(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

fn expand(input: proc_macro2::TokenStream) -> syn::Result<proc_macro2::TokenStream> {
    let (rt, nodes) = parse::input(input)?;
    let category = category::of(&nodes)?;
    let buf = format_ident!("__kiln_html", span = Span::mixed_site());
    let mut expander = Expander { rt: rt.clone(), buf: buf.clone(), errors: Vec::new(), live: None };
    let top = expand::top_level(category);
    if category == category::Category::Document && nodes.len() != 1 {
        expander.error(nodes[1].span(), "a document fragment holds its `<html>` element alone");
    }
    let mut out = Out::default();
    expander.nodes(&nodes, &top, &mut out);
    let mut errors = expander.errors.into_iter();
    if let Some(mut first) = errors.next() {
        errors.for_each(|e| first.combine(e));
        return Err(first);
    }
    let capacity = out.static_len();
    let body = out.finish(&buf);
    let category = format_ident!("{}", category.type_name());
    let hint = format_ident!("__KILN_SIZE_HINT", span = Span::mixed_site());
    Ok(quote!({
        static #hint: #rt::SizeHint = #rt::SizeHint::new();
        let mut #buf = ::std::string::String::with_capacity(#hint.get(#capacity));
        {
            let #buf = &mut #buf;
            #body
        }
        #hint.record(#buf.len());
        #rt::Fragment::<#rt::#category>::__checked(#buf)
    }))
}
