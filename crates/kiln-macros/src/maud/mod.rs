//! maud's `html!`, expanded to paths through `::kiln::maud`, so that a crate that
//! depends on kiln alone can write templates: maud's own macro expands to
//! `extern crate maud;`, which needs maud among the caller's own dependencies.
//!
//! `ast`, `escape` and `generate` are maud_macros 0.27.0 (MIT OR Apache-2.0, by Chris
//! Wong and maud's contributors), changed only where they name the `maud` crate, and
//! `escape` rewritten without `unsafe`. Keep them in step with kiln's `maud` version.

// Vendored code keeps maud's own style.
#![allow(clippy::all, unreachable_pub, missing_docs)]

mod ast;
mod escape;
mod generate;

use ast::DiagnosticParse;
use proc_macro2::{Ident, Span, TokenStream};
use proc_macro2_diagnostics::Diagnostic;
use quote::quote;
use syn::parse::{ParseStream, Parser};

/// maud_macros' `expand`, with `::kiln::maud` for `maud`.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    // Heuristic: the size of the resulting markup tends to correlate with the
    // code size of the template itself
    let size_hint = input.to_string().len();

    let mut diagnostics = Vec::new();
    let markups =
        match Parser::parse2(|input: ParseStream| ast::Markups::diagnostic_parse(input, &mut diagnostics), input) {
            Ok(data) => data,
            Err(err) => {
                let err = err.to_compile_error();
                let diag_tokens = diagnostics.into_iter().map(Diagnostic::emit_as_expr_tokens);

                return quote! {{
                    #err
                    #(#diag_tokens)*
                }};
            }
        };

    let diag_tokens = diagnostics.into_iter().map(Diagnostic::emit_as_expr_tokens);

    let output_ident = Ident::new("__maud_output", Span::mixed_site());
    let stmts = generate::generate(markups, output_ident.clone());
    quote! {{
        extern crate alloc;
        let mut #output_ident = alloc::string::String::with_capacity(#size_hint);
        #stmts
        #(#diag_tokens)*
        ::kiln::maud::PreEscaped(#output_ident)
    }}
}
